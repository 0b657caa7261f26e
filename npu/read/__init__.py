"""Readers for the containers a Vela command stream travels in (npz, tflite, blob, COP1)."""
