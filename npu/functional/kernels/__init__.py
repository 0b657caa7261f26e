"""Vectorised kernels: each takes zero-point-corrected int64 arrays and returns int64
accumulators (or pooled values); the output stage is applied by the engine."""
