"""Readers: ELF files (relocatable objects and linked images), ar archives, GNU ld map files."""
