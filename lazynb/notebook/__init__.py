"""The notebook layer: the %%tinygrad magic, widgets and HTML views. Everything here reads the trace bus;
the compiler core never imports this package."""
