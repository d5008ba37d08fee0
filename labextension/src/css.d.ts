/** style/*.css imported by the standalone bundle arrive as text (webpack.standalone.js loads them with css-loader). */
declare module '*.css' {
  const text: string;
  export default text;
}
