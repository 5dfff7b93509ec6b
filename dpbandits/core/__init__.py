"""The floor of the library: input checks, the compiled-code helpers, samplers, files."""
