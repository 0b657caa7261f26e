"""npu: a cycle-approximate Ethos-U emulator that runs real Vela command streams."""
