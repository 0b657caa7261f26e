"""Developer tools that regenerate the data files in ``npu/data``; not used at run time."""
