"""jaxtarget: find JAX calls that will not lower on the backends you target."""

__version__ = "0.1.0"
