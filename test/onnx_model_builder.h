// Building ONNX models in tests with the onnx protobuf classes: a
// ModelProto under construction (OnnxModel), tensor protos, attributes, and
// running a saved model through the loader and the CPU reference kernels.
// Shared by onnx_import_test.cc and onnx_opset18_test.cc.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_reference.h"
#include "graph/onnx_import.h"
#include "scheduler/model_loader.h"
#include "test/test_util.h"

namespace hetsched::onnx_test {

using Floats = std::vector<float>;
using Ints = std::vector<int64_t>;

inline constexpr int kFloat = onnx::TensorProto::FLOAT;
inline constexpr int kInt64 = onnx::TensorProto::INT64;

// One dim of a declared input shape: a number, or a name (dim_param).
struct Dim {
  Dim(int64_t v) : value(v) {}      // NOLINT: implicit so shapes read {"N", 3, 4}
  Dim(const char* p) : param(p) {}  // NOLINT
  int64_t value = -1;
  std::string param;
};

inline onnx::TensorProto f32_proto(const Ints& dims, const Floats& values, bool raw) {
  onnx::TensorProto t;
  t.set_data_type(kFloat);
  for (int64_t d : dims) t.add_dims(d);
  if (raw)
    t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  else
    for (float v : values) t.add_float_data(v);
  return t;
}

inline onnx::TensorProto i64_proto(const Ints& dims, const Ints& values, bool raw = false) {
  onnx::TensorProto t;
  t.set_data_type(kInt64);
  for (int64_t d : dims) t.add_dims(d);
  if (raw)
    t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t)));
  else
    for (int64_t v : values) t.add_int64_data(v);
  return t;
}

// A ModelProto under construction.
class OnnxModel {
 public:
  explicit OnnxModel(int opset) {
    proto.set_ir_version(8);
    auto* o = proto.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    proto.mutable_graph()->set_name("test_model");
  }
  onnx::GraphProto& graph() { return *proto.mutable_graph(); }

  void input(const std::string& name, int elem_type, const std::vector<Dim>& dims) {
    auto* vi = graph().add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    auto* shape = tt->mutable_shape();
    for (const Dim& d : dims) {
      auto* dim = shape->add_dim();
      if (d.param.empty())
        dim->set_dim_value(d.value);
      else
        dim->set_dim_param(d.param);
    }
  }
  void output(const std::string& name) { graph().add_output()->set_name(name); }
  void initializer(const std::string& name, onnx::TensorProto t) {
    t.set_name(name);
    *graph().add_initializer() = std::move(t);
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  std::string save(const testing::TempDir& dir, const std::string& file = "model.onnx") const {
    const std::string path = (dir / file).string();
    std::ofstream f(path, std::ios::binary);
    proto.SerializeToOstream(&f);
    return path;
  }

  onnx::ModelProto proto;
};

inline onnx::AttributeProto& add_attr(onnx::NodeProto& n, const std::string& name, onnx::AttributeProto::AttributeType type) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return *a;
}
inline void attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  add_attr(n, name, onnx::AttributeProto::INT).set_i(v);
}
inline void attr(onnx::NodeProto& n, const std::string& name, float v) {
  add_attr(n, name, onnx::AttributeProto::FLOAT).set_f(v);
}
inline void attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  add_attr(n, name, onnx::AttributeProto::STRING).set_s(v);
}
inline void attr(onnx::NodeProto& n, const std::string& name, const Ints& v) {
  auto& a = add_attr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
}
inline void attr(onnx::NodeProto& n, const std::string& name, const Floats& v) {
  auto& a = add_attr(n, name, onnx::AttributeProto::FLOATS);
  for (float x : v) a.add_floats(x);
}
inline void attr(onnx::NodeProto& n, const std::string& name, const onnx::TensorProto& t) {
  *add_attr(n, name, onnx::AttributeProto::TENSOR).mutable_t() = t;
}

inline Tensor f32(Shape shape, const Floats& v) { return Tensor::from_vector(DType::kFloat32, std::move(shape), v); }

// Saves the model, loads it the way every command does (load_model: strict
// import, clean-ups, check_graph) and runs it with the CPU kernels.
inline Result<std::vector<Tensor>> load_and_run(const OnnxModel& model, const std::vector<Tensor>& inputs,
                                         const InputShapes& shapes = {}) {
  testing::TempDir dir;
  HS_ASSIGN_OR_RETURN(Graph g, load_model(model.save(dir), shapes));
  return cpu::run_graph_reference(g, inputs);
}

inline void expect_f32(const Result<std::vector<Tensor>>& r, const Shape& shape, const Floats& expected, float tol = 1e-6f) {
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  const Tensor& t = (*r)[0];
  ASSERT_EQ(t.dtype(), DType::kFloat32);
  ASSERT_EQ(t.shape(), shape);
  ASSERT_EQ(static_cast<size_t>(t.num_elements()), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(t.data<float>()[i], expected[i], tol + tol * std::abs(expected[i])) << "element " << i;
}

inline Result<ImportReport> import_model(const OnnxModel& model) {
  testing::TempDir dir;
  return import_onnx(model.save(dir));
}

// x [2,3] → Relu → y, the smallest complete model.
inline OnnxModel relu_model(int opset) {
  OnnxModel m(opset);
  m.input("x", kFloat, {2, 3});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  return m;
}

// A bias-free Conv `in` -> `out` of `cin` -> `cout` channels, k x k (pads 1
// for 3x3, else 0), weights uniform in +-1/sqrt(fan-in) so outputs stay of
// order 1, reproducible from `seed`.
inline void add_random_conv(OnnxModel& m, const std::string& in, const std::string& out, int64_t cin, int64_t cout,
                            int64_t k, uint32_t seed) {
  const float bound = 1.f / std::sqrt(static_cast<float>(cin * k * k));
  const Tensor wt = testing::random_tensor({cout, cin, k, k}, seed, -bound, bound);
  m.initializer(out + "_w", f32_proto({cout, cin, k, k}, Floats(wt.data<float>(), wt.data<float>() + wt.num_elements()), true));
  auto& n = m.node("Conv", {in, out + "_w"}, {out}, out);
  attr(n, "pads", k == 3 ? Ints{1, 1, 1, 1} : Ints{0, 0, 0, 0});
}

// A BatchNormalization `in` -> `out` over `c` channels with random but
// well-conditioned statistics (variance 0.5-2), reproducible from `seed`.
inline void add_random_batch_norm(OnnxModel& m, const std::string& in, const std::string& out, int64_t c, uint32_t seed) {
  const Tensor scale = testing::random_tensor({c}, seed, 0.5f, 1.5f);
  const Tensor bias = testing::random_tensor({c}, seed + 1, -0.2f, 0.2f);
  const Tensor mean = testing::random_tensor({c}, seed + 2, -0.2f, 0.2f);
  const Tensor var = testing::random_tensor({c}, seed + 3, 0.5f, 2.f);
  auto v = [](const Tensor& t) { return Floats(t.data<float>(), t.data<float>() + t.num_elements()); };
  m.initializer(out + "_s", f32_proto({c}, v(scale), true));
  m.initializer(out + "_b", f32_proto({c}, v(bias), true));
  m.initializer(out + "_m", f32_proto({c}, v(mean), true));
  m.initializer(out + "_v", f32_proto({c}, v(var), true));
  m.node("BatchNormalization", {in, out + "_s", out + "_b", out + "_m", out + "_v"}, {out}, out);
}

}  // namespace hetsched::onnx_test
