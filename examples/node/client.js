#!/usr/bin/env node
// A Node.js client of dmlrpc.v1.DirectMLService that uses nothing but the .proto files (loaded at run time by
// @grpc/proto-loader): it runs the examples of DirectML's DML_TOP_K1_OPERATOR_DESC and
// DML_SCATTER_ND_OPERATOR_DESC pages and checks the results, then runs some of them again as tagged items of one
// ExecuteMany stream.
//
// Usage: node client.js HOST:PORT [PROTO_DIR]   (PROTO_DIR defaults to the repository's protos/)
// Prints one "PASS name: ..." or "FAIL name: ..." line per check and a final "RESULT passed=N failed=M" line;
// exits 0 only when every check passed.
'use strict';

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const [target, protoDir = path.join(__dirname, '..', '..', 'protos')] = process.argv.slice(2);
if (!target) {
  console.error('usage: node client.js HOST:PORT [PROTO_DIR]');
  process.exit(2);
}

// keepCase: the proto's field names exactly (DirectML's names in snake_case); enums as their names; 64-bit
// integers as strings so nothing is rounded.
const packageDefinition = protoLoader.loadSync('dmlrpc/v1/service.proto', {
  includeDirs: [protoDir],
  keepCase: true,
  enums: String,
  longs: String,
  defaults: true,
  oneofs: true,
});
const v1 = grpc.loadPackageDefinition(packageDefinition).dmlrpc.v1;

// ---------------------------------------------------------------------------------------------------------------
// Tensor descs, filled as DirectML's DML_BUFFER_TENSOR_DESC / DML_TENSOR_DESC are.

const ELEMENT_SIZE_IN_BYTES = {
  TENSOR_DATA_TYPE_FLOAT32: 4,
  TENSOR_DATA_TYPE_UINT32: 4,
  TENSOR_DATA_TYPE_INT32: 4,
  TENSOR_DATA_TYPE_FLOAT64: 8,
  TENSOR_DATA_TYPE_UINT64: 8,
  TENSOR_DATA_TYPE_INT64: 8,
};

// DMLCalcBufferTensorSize from DirectML's helper documentation: the byte offset one past the last element,
// rounded up to a multiple of 4. Strides are in elements; empty strides mean packed (row-major).
function DMLCalcBufferTensorSize(dataType, sizes, strides = []) {
  const indexOfLastElement = strides.length
    ? sizes.reduce((sum, size, i) => sum + (size - 1) * strides[i], 0)
    : sizes.reduce((product, size) => product * size, 1) - 1;
  const minimumImpliedSizeInBytes = (indexOfLastElement + 1) * ELEMENT_SIZE_IN_BYTES[dataType];
  return Math.ceil(minimumImpliedSizeInBytes / 4) * 4;
}

// A DML_TENSOR_DESC of type DML_TENSOR_TYPE_BUFFER holding a packed DML_BUFFER_TENSOR_DESC.
function bufferTensorDesc(dataType, sizes) {
  return {
    buffer: {
      data_type: dataType,
      flags: 0, // DML_TENSOR_FLAG_NONE
      sizes, // DimensionCount = sizes.length
      strides: [],
      total_tensor_size_in_bytes: String(DMLCalcBufferTensorSize(dataType, sizes)),
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Buffers: little-endian bytes.

function float32Bytes(values) {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes;
}

function uint32Bytes(values) {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, i) => bytes.writeUInt32LE(value, i * 4));
  return bytes;
}

function readFloat32(bytes, count) {
  return Array.from({ length: Math.min(count, bytes.length >> 2) }, (_, i) => bytes.readFloatLE(i * 4));
}

function readUint32(bytes, count) {
  return Array.from({ length: Math.min(count, bytes.length >> 2) }, (_, i) => bytes.readUInt32LE(i * 4));
}

// DML_BINDING_DESC of type DML_BINDING_TYPE_BUFFER.
const bufferBinding = (data) => ({ buffer: { data } });

const join = (values) => `[${values.join(' ')}]`;
const equal = (a, b) => a.length === b.length && a.every((value, i) => value === b[i]);

// ---------------------------------------------------------------------------------------------------------------
// google.rpc.Status in the `grpc-status-details-bin` trailer, read with a few lines of protobuf wire format (no
// googleapis protos needed): Status.details = 3 (Any), Any.type_url = 1, Any.value = 2,
// BadRequest.field_violations = 1, FieldViolation.field = 1, FieldViolation.description = 2.

function lengthDelimitedFields(bytes) {
  const fields = [];
  let offset = 0;
  const varint = () => {
    let value = 0n;
    for (let shift = 0n; offset < bytes.length; shift += 7n) {
      const byte = bytes[offset++];
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
    throw new Error('truncated varint');
  };
  while (offset < bytes.length) {
    const tag = varint();
    const wireType = Number(tag & 7n);
    if (wireType === 0) varint();
    else if (wireType === 1) offset += 8;
    else if (wireType === 5) offset += 4;
    else if (wireType === 2) {
      const length = Number(varint());
      fields.push([Number(tag >> 3n), bytes.subarray(offset, offset + length)]);
      offset += length;
    } else throw new Error(`unsupported wire type ${wireType}`);
  }
  return fields;
}

// The `field` of every BadRequest field violation in an error's status details.
function badRequestFields(error) {
  const fieldPaths = [];
  for (const status of error.metadata?.get('grpc-status-details-bin') ?? []) {
    for (const [number, any] of lengthDelimitedFields(status)) {
      if (number !== 3) continue; // Status.details
      const anyFields = new Map(lengthDelimitedFields(any));
      if (!String(anyFields.get(1) ?? '').endsWith('/google.rpc.BadRequest')) continue;
      for (const [violationNumber, violation] of lengthDelimitedFields(anyFields.get(2) ?? Buffer.alloc(0))) {
        if (violationNumber !== 1) continue;
        for (const [fieldNumber, text] of lengthDelimitedFields(violation)) {
          if (fieldNumber === 1) fieldPaths.push(text.toString('utf8'));
        }
      }
    }
  }
  return fieldPaths;
}

// ---------------------------------------------------------------------------------------------------------------
// The checks.

// gRPC refuses received messages over 4 MiB by default; output tensors may be larger.
const client = new v1.DirectMLService(target, grpc.credentials.createInsecure(), {
  'grpc.max_receive_message_length': -1,
  'grpc.max_send_message_length': -1,
});
const call = (method, request) =>
  new Promise((resolve, reject) =>
    client[method](request, { deadline: Date.now() + 30_000 }, (error, response) =>
      error ? reject(error) : resolve(response),
    ),
  );

let passed = 0;
let failed = 0;
function report(name, ok, detail) {
  if (ok) passed += 1;
  else failed += 1;
  console.log(`${ok ? 'PASS' : 'FAIL'} ${name}: ${detail}`);
}
const rpcFailed = (name, error) =>
  report(name, false, `rpc failed with status ${grpc.status[error.code]} (${error.code}): ${error.details}`);

async function capabilities() {
  let response;
  try {
    response = await call('GetCapabilities', {});
  } catch (error) {
    return rpcFailed('capabilities', error);
  }
  console.log(`server ${response.execution_provider} ${response.feature_level}`);
  const executable = response.operators.filter(
    (op) =>
      // DML_OPERATOR_TOP_K1, DML_OPERATOR_SCATTER_ND
      (op.operator_type === 'OPERATOR_TYPE_TOP_K1' || op.operator_type === 'OPERATOR_TYPE_SCATTER_ND') &&
      op.executable,
  );
  report('capabilities', executable.length === 2, 'top_k1 scatter_nd executable');
}

// DML_TOP_K1_OPERATOR_DESC on a {1,1,3,4} FLOAT32 input, UINT32 indices.
function topK1Request(input, axis, k, direction) {
  const inputSizes = [1, 1, 3, 4];
  const outputSizes = inputSizes.map((size, i) => (i === axis ? k : size));
  return {
    operator_desc: {
      // DML_OPERATOR_TOP_K1
      top_k1: {
        input_tensor: bufferTensorDesc('TENSOR_DATA_TYPE_FLOAT32', inputSizes),
        output_value_tensor: bufferTensorDesc('TENSOR_DATA_TYPE_FLOAT32', outputSizes),
        output_index_tensor: bufferTensorDesc('TENSOR_DATA_TYPE_UINT32', outputSizes),
        axis,
        k,
        axis_direction: direction,
      },
    },
    inputs: [bufferBinding(float32Bytes(input))], // InputTensor
  };
}

function checkTopK1(name, response, expectedValues, expectedIndices) {
  if (response.outputs.length !== 2) return report(name, false, 'expected 2 outputs');
  const values = readFloat32(response.outputs[0].buffer.data, expectedValues.length); // OutputValueTensor
  const indices = readUint32(response.outputs[1].buffer.data, expectedIndices.length); // OutputIndexTensor
  report(
    name,
    equal(values, expectedValues) && equal(indices, expectedIndices),
    `values ${join(values)} indices ${join(indices)}`,
  );
}

async function topK1(name, input, axis, k, direction, expectedValues, expectedIndices) {
  let response;
  try {
    response = await call('Execute', topK1Request(input, axis, k, direction));
  } catch (error) {
    return rpcFailed(name, error);
  }
  checkTopK1(name, response, expectedValues, expectedIndices);
}

// DML_SCATTER_ND_OPERATOR_DESC, the page's example in its valid form (every tensor 2-D).
function scatterNdRequest() {
  return {
    operator_desc: {
      // DML_OPERATOR_SCATTER_ND
      scatter_nd: {
        input_tensor: bufferTensorDesc('TENSOR_DATA_TYPE_FLOAT32', [1, 8]),
        indices_tensor: bufferTensorDesc('TENSOR_DATA_TYPE_UINT32', [4, 1]),
        updates_tensor: bufferTensorDesc('TENSOR_DATA_TYPE_FLOAT32', [1, 4]),
        output_tensor: bufferTensorDesc('TENSOR_DATA_TYPE_FLOAT32', [1, 8]),
        input_dimension_count: 1,
        indices_dimension_count: 2,
      },
    },
    // Bindings in the desc's input order: InputTensor, IndicesTensor, UpdatesTensor.
    inputs: [
      bufferBinding(float32Bytes([1, 2, 3, 4, 5, 6, 7, 8])),
      bufferBinding(uint32Bytes([4, 3, 1, 7])),
      bufferBinding(float32Bytes([9, 10, 11, 12])),
    ],
  };
}

function checkScatterNd(name, response) {
  const expected = [1, 11, 3, 10, 9, 6, 7, 12];
  if (response.outputs.length !== 1) return report(name, false, 'expected 1 output');
  const output = readFloat32(response.outputs[0].buffer.data, expected.length);
  report(name, equal(output, expected), `output ${join(output)}`);
}

async function scatterNd() {
  const name = 'scatter_nd example';
  let response;
  try {
    response = await call('Execute', scatterNdRequest());
  } catch (error) {
    return rpcFailed(name, error);
  }
  checkScatterNd(name, response);
}

// DML_TOP_K1_OPERATOR_DESC with K larger than the axis (the server answers INVALID_ARGUMENT).
function invalidTopK1Request() {
  return {
    operator_desc: {
      top_k1: {
        input_tensor: bufferTensorDesc('TENSOR_DATA_TYPE_FLOAT32', [1, 1, 3, 4]),
        output_value_tensor: bufferTensorDesc('TENSOR_DATA_TYPE_FLOAT32', [1, 1, 3, 9]),
        output_index_tensor: bufferTensorDesc('TENSOR_DATA_TYPE_UINT32', [1, 1, 3, 9]),
        axis: 3,
        k: 9,
        axis_direction: 'AXIS_DIRECTION_DECREASING',
      },
    },
    inputs: [bufferBinding(Buffer.alloc(48))],
  };
}

// K larger than the axis: INVALID_ARGUMENT with a BadRequest naming the field.
async function invalidArgument() {
  try {
    await call('Execute', invalidTopK1Request());
    report('invalid_argument', false, 'the call succeeded');
  } catch (error) {
    const fields = badRequestFields(error);
    const ok =
      error.code === grpc.status.INVALID_ARGUMENT && fields.length === 1 && fields[0] === 'operator_desc.top_k1.k';
    report('invalid_argument', ok, `${grpc.status[error.code]} ${fields[0] ?? '-'}`);
  }
}

// ExecuteMany: four items over one stream, two per message, each answered with its tag (out of order) and its own
// status; the bad one (K larger than the axis) fails alone.
function executeManyResults(messages) {
  return new Promise((resolve) => {
    const results = new Map();
    const stream = client.ExecuteMany({ deadline: Date.now() + 30_000 });
    // 64-bit tags arrive as strings (longs: String).
    stream.on('data', (response) => response.results.forEach((result) => results.set(String(result.tag), result)));
    stream.on('error', (error) => resolve({ results, error }));
    stream.on('end', () => resolve({ results, error: null }));
    messages.forEach((message) => stream.write(message));
    stream.end();
  });
}

async function executeMany() {
  const a = [0, 1, 10, 11, 3, 2, 9, 8, 4, 5, 6, 7];
  const b = [1, 2, 2, 3, 3, 4, 5, 5, 6, 6, 6, 6];
  const { results, error } = await executeManyResults([
    {
      items: [
        { tag: 1, execute: topK1Request(a, 3, 2, 'AXIS_DIRECTION_DECREASING') },
        { tag: 2, execute: invalidTopK1Request() },
      ],
    },
    {
      items: [
        { tag: 3, execute: topK1Request(b, 3, 3, 'AXIS_DIRECTION_INCREASING') },
        { tag: 4, execute: scatterNdRequest() },
      ],
    },
  ]);
  for (const tag of ['1', '2', '3', '4']) {
    const name = `execute_many tag ${tag}`;
    const result = results.get(tag);
    // An OK status may be left out of the message (all defaults): then it reads as null.
    const status = result?.status ?? { code: grpc.status.OK, message: '', field_violations: [] };
    if (!result) {
      rpcFailed(name, error ?? { code: grpc.status.UNKNOWN, details: 'no result' });
    } else if (tag === '2') {
      const fields = status.field_violations.map((violation) => violation.field);
      const ok =
        status.code === grpc.status.INVALID_ARGUMENT &&
        fields.length === 1 &&
        fields[0] === 'operator_desc.top_k1.k';
      report(name, ok, `${grpc.status[status.code]} ${fields[0] ?? '-'}`);
    } else if (status.code !== grpc.status.OK) {
      rpcFailed(name, { code: status.code, details: status.message });
    } else if (tag === '1') {
      checkTopK1(name, result.response, [11, 10, 9, 8, 7, 6], [3, 2, 2, 3, 3, 2]);
    } else if (tag === '3') {
      checkTopK1(name, result.response, [1, 2, 2, 3, 4, 5, 6, 6, 6], [0, 1, 2, 0, 1, 2, 0, 1, 2]);
    } else {
      checkScatterNd(name, result.response);
    }
  }
}

async function main() {
  await capabilities();

  // The four examples of the DML_TOP_K1_OPERATOR_DESC page.
  const a = [0, 1, 10, 11, 3, 2, 9, 8, 4, 5, 6, 7];
  const b = [1, 2, 2, 3, 3, 4, 5, 5, 6, 6, 6, 6];
  const DECREASING = 'AXIS_DIRECTION_DECREASING';
  const INCREASING = 'AXIS_DIRECTION_INCREASING';
  await topK1('top_k1 example 1', a, 3, 2, DECREASING, [11, 10, 9, 8, 7, 6], [3, 2, 2, 3, 3, 2]);
  await topK1('top_k1 example 2', a, 2, 2, DECREASING, [4, 5, 10, 11, 3, 2, 9, 8], [2, 2, 0, 0, 1, 1, 1, 1]);
  await topK1('top_k1 example 3', b, 3, 3, DECREASING, [3, 2, 2, 5, 5, 4, 6, 6, 6], [3, 1, 2, 2, 3, 1, 0, 1, 2]);
  await topK1('top_k1 example 4', b, 3, 3, INCREASING, [1, 2, 2, 3, 4, 5, 6, 6, 6], [0, 1, 2, 0, 1, 2, 0, 1, 2]);

  await scatterNd();
  await invalidArgument();
  await executeMany();

  console.log(`RESULT passed=${passed} failed=${failed}`);
  client.close();
  process.exitCode = failed === 0 ? 0 : 1;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
