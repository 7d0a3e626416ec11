"""Generated protobuf and gRPC modules for the dmlrpc.v1 wire protocol (run protos/generate.py to refresh)."""
