"""The Open Inference Protocol front door: KServe v2 gRPC with Triton's extensions, over the same serving core."""
