"""The statistics engine (private): batched coefficient kernels, grouping
levels, resampling and the tests built from them.  The public API is in
:mod:`metaeval.correlation` and :mod:`metaeval.compare`."""
