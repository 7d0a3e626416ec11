// A C++ client of dmlrpc.v1.DirectMLService that uses nothing but code generated from protos/: it runs the
// examples of DirectML's DML_TOP_K1_OPERATOR_DESC and DML_SCATTER_ND_OPERATOR_DESC pages and checks the results,
// then runs some of them again as tagged items of one ExecuteMany stream.
//
// Usage: dmlrpc_example HOST:PORT
// Prints one "PASS name: ..." or "FAIL name: ..." line per check and a final "RESULT passed=N failed=M" line;
// exits 0 only when every check passed.

#include <grpcpp/grpcpp.h>

#include <google/protobuf/io/coded_stream.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dmlrpc/v1/service.grpc.pb.h"

namespace v1 = dmlrpc::v1;

namespace {

// ---------------------------------------------------------------------------------------------------------------
// Tensor descs, filled as DirectML's DML_BUFFER_TENSOR_DESC / DML_TENSOR_DESC are.

uint64_t ElementSizeInBytes(v1::TensorDataType dataType) {
    switch (dataType) {
        case v1::TENSOR_DATA_TYPE_FLOAT64:
        case v1::TENSOR_DATA_TYPE_UINT64:
        case v1::TENSOR_DATA_TYPE_INT64:
            return 8;
        case v1::TENSOR_DATA_TYPE_FLOAT32:
        case v1::TENSOR_DATA_TYPE_UINT32:
        case v1::TENSOR_DATA_TYPE_INT32:
            return 4;
        case v1::TENSOR_DATA_TYPE_FLOAT16:
        case v1::TENSOR_DATA_TYPE_UINT16:
        case v1::TENSOR_DATA_TYPE_INT16:
            return 2;
        case v1::TENSOR_DATA_TYPE_UINT8:
        case v1::TENSOR_DATA_TYPE_INT8:
            return 1;
        default:
            return 0;  // UNKNOWN, and the packed 4-bit types (not used here)
    }
}

// DMLCalcBufferTensorSize from DirectML's helper documentation: the byte offset one past the last element,
// rounded up to a multiple of 4. Strides are in elements; empty strides mean packed (row-major).
uint64_t DMLCalcBufferTensorSize(v1::TensorDataType dataType, const std::vector<uint32_t>& sizes,
                                 const std::vector<uint32_t>& strides) {
    uint64_t indexOfLastElement = 0;
    if (strides.empty()) {
        uint64_t elementCount = 1;
        for (uint32_t size : sizes) elementCount *= size;
        indexOfLastElement = elementCount - 1;
    } else {
        for (size_t i = 0; i < sizes.size(); ++i) indexOfLastElement += uint64_t{sizes[i] - 1} * strides[i];
    }
    const uint64_t minimumImpliedSizeInBytes = (indexOfLastElement + 1) * ElementSizeInBytes(dataType);
    return (minimumImpliedSizeInBytes + 3) & ~uint64_t{3};
}

// A DML_TENSOR_DESC of type DML_TENSOR_TYPE_BUFFER holding a packed DML_BUFFER_TENSOR_DESC.
v1::TensorDesc BufferTensorDesc(v1::TensorDataType dataType, const std::vector<uint32_t>& sizes) {
    v1::TensorDesc tensorDesc;
    v1::BufferTensorDesc& bufferDesc = *tensorDesc.mutable_buffer();
    bufferDesc.set_data_type(dataType);
    bufferDesc.set_flags(v1::TENSOR_FLAG_NONE);
    for (uint32_t size : sizes) bufferDesc.add_sizes(size);  // DimensionCount = sizes.size()
    bufferDesc.set_total_tensor_size_in_bytes(DMLCalcBufferTensorSize(dataType, sizes, {}));
    return tensorDesc;
}

// ---------------------------------------------------------------------------------------------------------------
// Buffers: little-endian bytes, whatever the host's byte order.

template <typename T>
using BitsOf = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

template <typename T>
std::string ToLittleEndian(const std::vector<T>& values) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- and 8-byte element types only");
    std::string bytes;
    bytes.reserve(values.size() * sizeof(T));
    for (const T& value : values) {
        BitsOf<T> bits;
        std::memcpy(&bits, &value, sizeof(T));
        for (size_t i = 0; i < sizeof(T); ++i) bytes.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
    }
    return bytes;
}

template <typename T>
std::vector<T> FromLittleEndian(const std::string& bytes, size_t count) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- and 8-byte element types only");
    std::vector<T> values;
    for (size_t e = 0; e < count && (e + 1) * sizeof(T) <= bytes.size(); ++e) {
        BitsOf<T> bits = 0;
        for (size_t i = 0; i < sizeof(T); ++i) {
            bits |= BitsOf<T>{static_cast<unsigned char>(bytes[e * sizeof(T) + i])} << (8 * i);
        }
        T value;
        std::memcpy(&value, &bits, sizeof(T));
        values.push_back(value);
    }
    return values;
}

v1::BindingDesc BufferBinding(std::string data) {
    v1::BindingDesc binding;  // DML_BINDING_DESC of type DML_BINDING_TYPE_BUFFER
    binding.mutable_buffer()->set_data(std::move(data));
    return binding;
}

template <typename T>
std::string Join(const std::vector<T>& values) {
    std::ostringstream out;
    out << '[';
    for (size_t i = 0; i < values.size(); ++i) out << (i ? " " : "") << values[i];
    out << ']';
    return out.str();
}

// ---------------------------------------------------------------------------------------------------------------
// The requests.

// DML_TOP_K1_OPERATOR_DESC on a {1,1,3,4} FLOAT32 input, UINT32 indices.
v1::ExecuteRequest TopK1Request(const std::vector<float>& input, uint32_t axis, uint32_t k,
                                v1::AxisDirection direction) {
    const std::vector<uint32_t> inputSizes{1, 1, 3, 4};
    std::vector<uint32_t> outputSizes = inputSizes;
    outputSizes[axis] = k;

    v1::ExecuteRequest request;
    v1::TopK1OperatorDesc& topKDesc = *request.mutable_operator_desc()->mutable_top_k1();  // DML_OPERATOR_TOP_K1
    *topKDesc.mutable_input_tensor() = BufferTensorDesc(v1::TENSOR_DATA_TYPE_FLOAT32, inputSizes);
    *topKDesc.mutable_output_value_tensor() = BufferTensorDesc(v1::TENSOR_DATA_TYPE_FLOAT32, outputSizes);
    *topKDesc.mutable_output_index_tensor() = BufferTensorDesc(v1::TENSOR_DATA_TYPE_UINT32, outputSizes);
    topKDesc.set_axis(axis);
    topKDesc.set_k(k);
    topKDesc.set_axis_direction(direction);
    *request.add_inputs() = BufferBinding(ToLittleEndian(input));  // InputTensor
    return request;
}

// DML_SCATTER_ND_OPERATOR_DESC, the page's example in its valid form (every tensor 2-D).
v1::ExecuteRequest ScatterNdRequest() {
    const std::vector<float> input{1, 2, 3, 4, 5, 6, 7, 8};
    const std::vector<uint32_t> indices{4, 3, 1, 7};
    const std::vector<float> updates{9, 10, 11, 12};

    v1::ExecuteRequest request;
    v1::ScatterNdOperatorDesc& scatterDesc = *request.mutable_operator_desc()->mutable_scatter_nd();
    *scatterDesc.mutable_input_tensor() = BufferTensorDesc(v1::TENSOR_DATA_TYPE_FLOAT32, {1, 8});
    *scatterDesc.mutable_indices_tensor() = BufferTensorDesc(v1::TENSOR_DATA_TYPE_UINT32, {4, 1});
    *scatterDesc.mutable_updates_tensor() = BufferTensorDesc(v1::TENSOR_DATA_TYPE_FLOAT32, {1, 4});
    *scatterDesc.mutable_output_tensor() = BufferTensorDesc(v1::TENSOR_DATA_TYPE_FLOAT32, {1, 8});
    scatterDesc.set_input_dimension_count(1);
    scatterDesc.set_indices_dimension_count(2);
    // Bindings in the desc's input order: InputTensor, IndicesTensor, UpdatesTensor.
    *request.add_inputs() = BufferBinding(ToLittleEndian(input));
    *request.add_inputs() = BufferBinding(ToLittleEndian(indices));
    *request.add_inputs() = BufferBinding(ToLittleEndian(updates));
    return request;
}

// DML_TOP_K1_OPERATOR_DESC with K larger than the axis (the server answers INVALID_ARGUMENT).
v1::ExecuteRequest InvalidTopK1Request() {
    v1::ExecuteRequest request;
    v1::TopK1OperatorDesc& topKDesc = *request.mutable_operator_desc()->mutable_top_k1();
    *topKDesc.mutable_input_tensor() = BufferTensorDesc(v1::TENSOR_DATA_TYPE_FLOAT32, {1, 1, 3, 4});
    *topKDesc.mutable_output_value_tensor() = BufferTensorDesc(v1::TENSOR_DATA_TYPE_FLOAT32, {1, 1, 3, 9});
    *topKDesc.mutable_output_index_tensor() = BufferTensorDesc(v1::TENSOR_DATA_TYPE_UINT32, {1, 1, 3, 9});
    topKDesc.set_axis(3);
    topKDesc.set_k(9);
    topKDesc.set_axis_direction(v1::AXIS_DIRECTION_DECREASING);
    *request.add_inputs() = BufferBinding(std::string(48, '\0'));
    return request;
}

// ---------------------------------------------------------------------------------------------------------------
// google.rpc.Status in the `grpc-status-details-bin` trailer, read with protobuf's wire-format reader (no
// googleapis code generation): Status.details = 3 (Any), Any.type_url = 1, Any.value = 2,
// BadRequest.field_violations = 1, FieldViolation.field = 1, FieldViolation.description = 2.

std::vector<std::pair<uint32_t, std::string>> LengthDelimitedFields(const std::string& message) {
    std::vector<std::pair<uint32_t, std::string>> fields;
    google::protobuf::io::CodedInputStream input(reinterpret_cast<const uint8_t*>(message.data()),
                                                 static_cast<int>(message.size()));
    while (const uint32_t tag = input.ReadTag()) {
        const uint32_t wireType = tag & 7;
        uint64_t varint = 0;
        uint32_t length = 0;
        std::string value;
        bool ok = true;
        switch (wireType) {
            case 0: ok = input.ReadVarint64(&varint); break;
            case 1: ok = input.Skip(8); break;
            case 5: ok = input.Skip(4); break;
            case 2:
                ok = input.ReadVarint32(&length) && input.ReadString(&value, static_cast<int>(length));
                if (ok) fields.emplace_back(tag >> 3, std::move(value));
                break;
            default: ok = false;
        }
        if (!ok) break;
    }
    return fields;
}

// The `field` of every BadRequest field violation in a status's details.
std::vector<std::string> BadRequestFields(const grpc::Status& status) {
    std::vector<std::string> fieldPaths;
    for (const auto& [number, any] : LengthDelimitedFields(status.error_details())) {
        if (number != 3) continue;  // Status.details
        std::string typeUrl, value;
        for (const auto& [anyNumber, anyValue] : LengthDelimitedFields(any)) {
            if (anyNumber == 1) typeUrl = anyValue;
            if (anyNumber == 2) value = anyValue;
        }
        const std::string suffix = "/google.rpc.BadRequest";
        if (typeUrl.size() < suffix.size() || typeUrl.compare(typeUrl.size() - suffix.size(), suffix.size(), suffix))
            continue;
        for (const auto& [violationNumber, violation] : LengthDelimitedFields(value)) {
            if (violationNumber != 1) continue;
            for (const auto& [number2, text] : LengthDelimitedFields(violation)) {
                if (number2 == 1) fieldPaths.push_back(text);
            }
        }
    }
    return fieldPaths;
}

// gRPC's canonical name of a status code, as other languages print it (grpc::StatusCode has no to_string).
std::string CodeName(grpc::StatusCode code) {
    switch (code) {
        case grpc::StatusCode::OK: return "OK";
        case grpc::StatusCode::CANCELLED: return "CANCELLED";
        case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
        case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
        case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
        case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
        case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
        case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
        case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
        case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
        case grpc::StatusCode::ABORTED: return "ABORTED";
        case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
        case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
        case grpc::StatusCode::INTERNAL: return "INTERNAL";
        case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
        case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
        case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
        default: return "CODE_" + std::to_string(static_cast<int>(code));
    }
}

// What an expected-INVALID_ARGUMENT check prints: the status it really got and the first violated field; the
// message as well when the check failed, since then the code alone rarely says why.
std::string StatusDetail(grpc::StatusCode code, const std::string& message, const std::string& field, bool ok) {
    std::string detail = CodeName(code) + " " + field;
    if (!ok && !message.empty()) detail += ": " + message;
    return detail;
}

// ---------------------------------------------------------------------------------------------------------------
// The checks.

class Checks {
  public:
    explicit Checks(const std::string& target) {
        // gRPC refuses received messages over 4 MiB by default; output tensors may be larger.
        grpc::ChannelArguments arguments;
        arguments.SetMaxReceiveMessageSize(-1);
        arguments.SetMaxSendMessageSize(-1);
        stub_ = v1::DirectMLService::NewStub(
            grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), arguments));
    }

    grpc::Status Execute(const v1::ExecuteRequest& request, v1::ExecuteResponse* response) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        return stub_->Execute(&context, request, response);
    }

    void Capabilities() {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        v1::GetCapabilitiesResponse capabilities;
        const grpc::Status status = stub_->GetCapabilities(&context, v1::GetCapabilitiesRequest{}, &capabilities);
        if (!status.ok()) return RpcFailed("capabilities", status);
        std::cout << "server " << capabilities.execution_provider() << ' '
                  << v1::FeatureLevel_Name(capabilities.feature_level()) << '\n';
        int executable = 0;
        for (const v1::OperatorCapability& op : capabilities.operators()) {
            const bool wanted = op.operator_type() == v1::OPERATOR_TYPE_TOP_K1 ||  // DML_OPERATOR_TOP_K1
                                op.operator_type() == v1::OPERATOR_TYPE_SCATTER_ND;  // DML_OPERATOR_SCATTER_ND
            if (wanted && op.executable()) ++executable;
        }
        Report("capabilities", executable == 2, "top_k1 scatter_nd executable");
    }

    // DML_TOP_K1_OPERATOR_DESC on a {1,1,3,4} FLOAT32 input, UINT32 indices.
    void TopK1(const std::string& name, const std::vector<float>& input, uint32_t axis, uint32_t k,
               v1::AxisDirection direction, const std::vector<float>& expectedValues,
               const std::vector<uint32_t>& expectedIndices) {
        v1::ExecuteResponse response;
        const grpc::Status status = Execute(TopK1Request(input, axis, k, direction), &response);
        if (!status.ok()) return RpcFailed(name, status);
        CheckTopK1(name, response, expectedValues, expectedIndices);
    }

    // DML_SCATTER_ND_OPERATOR_DESC, the page's example in its valid form (every tensor 2-D).
    void ScatterNd() {
        v1::ExecuteResponse response;
        const grpc::Status status = Execute(ScatterNdRequest(), &response);
        if (!status.ok()) return RpcFailed("scatter_nd example", status);
        CheckScatterNd("scatter_nd example", response);
    }

    // K larger than the axis: INVALID_ARGUMENT with a BadRequest naming the field.
    void InvalidArgument() {
        v1::ExecuteResponse response;
        const grpc::Status status = Execute(InvalidTopK1Request(), &response);
        const std::vector<std::string> fields = BadRequestFields(status);
        const bool ok = status.error_code() == grpc::StatusCode::INVALID_ARGUMENT && fields.size() == 1 &&
                        fields[0] == "operator_desc.top_k1.k";
        Report("invalid_argument", ok,
               StatusDetail(status.error_code(), status.error_message(), fields.empty() ? "-" : fields[0], ok));
    }

    // ExecuteMany: four items over one stream, two per message, each answered with its tag (out of order) and
    // its own status; the bad one (K larger than the axis) fails alone. A few small items: write them all, then
    // read; a long stream would read on another thread while it writes.
    void ExecuteMany() {
        const std::vector<float> a{0, 1, 10, 11, 3, 2, 9, 8, 4, 5, 6, 7};
        const std::vector<float> b{1, 2, 2, 3, 3, 4, 5, 5, 6, 6, 6, 6};
        v1::ExecuteManyRequest first, second;
        AddItem(&first, 1, TopK1Request(a, 3, 2, v1::AXIS_DIRECTION_DECREASING));
        AddItem(&first, 2, InvalidTopK1Request());
        AddItem(&second, 3, TopK1Request(b, 3, 3, v1::AXIS_DIRECTION_INCREASING));
        AddItem(&second, 4, ScatterNdRequest());

        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        auto stream = stub_->ExecuteMany(&context);
        for (const v1::ExecuteManyRequest* request : {&first, &second}) {
            if (!stream->Write(*request)) break;  // the call ended: Finish() says why
        }
        stream->WritesDone();
        std::map<uint64_t, v1::ItemResult> results;
        v1::ExecuteManyResponse response;
        while (stream->Read(&response)) {
            for (const v1::ItemResult& result : response.results()) results[result.tag()] = result;
        }
        const grpc::Status status = stream->Finish();

        for (uint64_t tag = 1; tag <= 4; ++tag) {
            const std::string name = "execute_many tag " + std::to_string(tag);
            const auto found = results.find(tag);
            if (found == results.end()) {
                RpcFailed(name, status.ok() ? grpc::Status(grpc::StatusCode::UNKNOWN, "no result") : status);
                continue;
            }
            const v1::ItemResult& result = found->second;
            if (tag == 2) {
                const bool ok = result.status().code() == grpc::StatusCode::INVALID_ARGUMENT &&
                                result.status().field_violations_size() == 1 &&
                                result.status().field_violations(0).field() == "operator_desc.top_k1.k";
                const std::string field =
                    result.status().field_violations_size() ? result.status().field_violations(0).field() : "-";
                Report(name, ok,
                       StatusDetail(static_cast<grpc::StatusCode>(result.status().code()), result.status().message(),
                                    field, ok));
            } else if (result.status().code() != grpc::StatusCode::OK) {
                RpcFailed(name, grpc::Status(static_cast<grpc::StatusCode>(result.status().code()),
                                             result.status().message()));
            } else if (tag == 1) {
                CheckTopK1(name, result.response(), {11, 10, 9, 8, 7, 6}, {3, 2, 2, 3, 3, 2});
            } else if (tag == 3) {
                CheckTopK1(name, result.response(), {1, 2, 2, 3, 4, 5, 6, 6, 6}, {0, 1, 2, 0, 1, 2, 0, 1, 2});
            } else {
                CheckScatterNd(name, result.response());
            }
        }
    }

    int Finish() const {
        std::cout << "RESULT passed=" << passed_ << " failed=" << failed_ << '\n';
        return failed_ == 0 ? 0 : 1;
    }

  private:
    static void AddItem(v1::ExecuteManyRequest* request, uint64_t tag, v1::ExecuteRequest call) {
        v1::ExecuteItem& item = *request->add_items();
        item.set_tag(tag);
        *item.mutable_execute() = std::move(call);
    }

    void CheckTopK1(const std::string& name, const v1::ExecuteResponse& response,
                    const std::vector<float>& expectedValues, const std::vector<uint32_t>& expectedIndices) {
        if (response.outputs_size() != 2) return Report(name, false, "expected 2 outputs");
        const size_t count = expectedValues.size();
        // Outputs in the desc's output order: OutputValueTensor, OutputIndexTensor.
        const auto values = FromLittleEndian<float>(response.outputs(0).buffer().data(), count);
        const auto indices = FromLittleEndian<uint32_t>(response.outputs(1).buffer().data(), count);
        Report(name, values == expectedValues && indices == expectedIndices,
               "values " + Join(values) + " indices " + Join(indices));
    }

    void CheckScatterNd(const std::string& name, const v1::ExecuteResponse& response) {
        const std::vector<float> expected{1, 11, 3, 10, 9, 6, 7, 12};
        if (response.outputs_size() != 1) return Report(name, false, "expected 1 output");
        const auto output = FromLittleEndian<float>(response.outputs(0).buffer().data(), expected.size());
        Report(name, output == expected, "output " + Join(output));
    }

    void Report(const std::string& name, bool ok, const std::string& detail) {
        ++(ok ? passed_ : failed_);
        std::cout << (ok ? "PASS " : "FAIL ") << name << ": " << detail << '\n';
    }

    void RpcFailed(const std::string& name, const grpc::Status& status) {
        Report(name, false,
               "rpc failed with status " + CodeName(status.error_code()) + " (" +
                   std::to_string(status.error_code()) + "): " + status.error_message());
    }

    std::unique_ptr<v1::DirectMLService::Stub> stub_;
    int passed_ = 0;
    int failed_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: " << argv[0] << " HOST:PORT\n";
        return 2;
    }
    Checks checks(argv[1]);
    checks.Capabilities();

    // The four examples of the DML_TOP_K1_OPERATOR_DESC page.
    const std::vector<float> a{0, 1, 10, 11, 3, 2, 9, 8, 4, 5, 6, 7};
    const std::vector<float> b{1, 2, 2, 3, 3, 4, 5, 5, 6, 6, 6, 6};
    checks.TopK1("top_k1 example 1", a, 3, 2, v1::AXIS_DIRECTION_DECREASING, {11, 10, 9, 8, 7, 6},
                 {3, 2, 2, 3, 3, 2});
    checks.TopK1("top_k1 example 2", a, 2, 2, v1::AXIS_DIRECTION_DECREASING, {4, 5, 10, 11, 3, 2, 9, 8},
                 {2, 2, 0, 0, 1, 1, 1, 1});
    checks.TopK1("top_k1 example 3", b, 3, 3, v1::AXIS_DIRECTION_DECREASING, {3, 2, 2, 5, 5, 4, 6, 6, 6},
                 {3, 1, 2, 2, 3, 1, 0, 1, 2});
    checks.TopK1("top_k1 example 4", b, 3, 3, v1::AXIS_DIRECTION_INCREASING, {1, 2, 2, 3, 4, 5, 6, 6, 6},
                 {0, 1, 2, 0, 1, 2, 0, 1, 2});

    checks.ScatterNd();
    checks.InvalidArgument();
    checks.ExecuteMany();
    return checks.Finish();
}
