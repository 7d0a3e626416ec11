"""ONNX Runtime side of the server: execution provider choice and the compiled-session cache."""
