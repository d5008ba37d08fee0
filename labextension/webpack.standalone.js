// The standalone trace view: lib/standalone.js (from `tsc`) and style/base.css bundled into one script with no
// chunks, no workers and no runtime imports, written into the Python package as lazynb/static/lazynb-view.js.
// lazynb embeds it in %%tinygrad text/html outputs and in VIZ=1 files (see lazynb/notebook/html.py, lazynb/notebook/viz.py).
// Run by `npm run build:standalone` (part of build:prod): `node webpack.standalone.js` (no webpack-cli needed).
const path = require('path');
const webpack = require('webpack');

const config = {
  mode: 'production',
  target: ['web', 'es2020'],
  entry: path.resolve(__dirname, 'lib/standalone.js'),
  output: {
    path: path.resolve(__dirname, '../lazynb/static'),
    filename: 'lazynb-view.js',
    publicPath: '',
    iife: true,
    clean: false
  },
  devtool: false,
  performance: { hints: false },
  optimization: { splitChunks: false, runtimeChunk: false },
  module: {
    rules: [
      {
        test: /\.css$/,
        use: [
          {
            loader: 'css-loader',
            options: { exportType: 'string', url: false, import: false }
          }
        ]
      }
    ]
  },
  plugins: [
    // one inline script has no URL to start a worker from: layout runs on the main thread
    new webpack.NormalModuleReplacementPlugin(
      /^\.\/layoutClient(\.js)?$/,
      './layoutMain.js'
    ),
    new webpack.optimize.LimitChunkCountPlugin({ maxChunks: 1 })
  ]
};

module.exports = config;

if (require.main === module) {
  webpack(config, (err, stats) => {
    if (err || stats.hasErrors()) {
      console.error(err || stats.toString('errors-only'));
      process.exit(1);
    }
    const out = path.join(config.output.path, config.output.filename);
    console.log(
      `standalone view: ${out} (${require('fs').statSync(out).size} bytes)`
    );
  });
}
