"""envbridge's version, in a module of its own: the remote host's handshake reads it without
importing the package's top level."""

__version__ = "0.1.0"
