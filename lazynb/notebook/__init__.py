"""The notebook layer: the %%tinygrad magic, widgets, and the outputs the extension's view draws. Everything here reads the trace bus;
the compiler core never imports this package."""
from lazynb.notebook.stpicture import show_st  # noqa: F401
