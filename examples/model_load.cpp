// A runtime's model load through the C++ API: a few convolutions' weights reordered from oiyx into
// os_is_yx_isv16_osv16, compiled together ahead of use (prepare), then enqueued back to back, each after its
// upload (wait lists and events), the host waiting once at the end; each result compared with the host
// reference.   model_load_cpp [DEVICE]
// Exit 0 when every weight matches, 1 otherwise, 2 on an error (no device included).
#include <cstdio>
#include <vector>

#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"

int main(int argc, char** argv) {
  using namespace clreorder;
  try {
    const Engine engine = Engine::open(argc > 1 ? argv[1] : "");
    const std::vector<Dims> shapes = {{64, 3, 3, 3}, {64, 64, 3, 3}, {128, 64, 1, 1}, {40, 128, 3, 3}};
    std::vector<std::pair<Layout, Layout>> layers;
    for (const Dims& d : shapes)
      layers.emplace_back(Layout(format_from_name("oiyx"), DataType::f32, d),
                          Layout(format_from_name("os_is_yx_isv16_osv16"), DataType::f32, d));
    prepare(engine, layers);  // one compile for the model

    const cl::CommandQueue& q = engine.queue();
    std::vector<std::vector<uint8_t>> weights, blocked;
    std::vector<cl::Buffer> src, dst;
    std::vector<cl::Event> done;
    for (const auto& [from, to] : layers) {
      weights.push_back(make_pattern(from));
      blocked.emplace_back(static_cast<size_t>(to.bytes()));
      src.emplace_back(engine.context(), CL_MEM_READ_ONLY, weights.back().size());
      dst.emplace_back(engine.context(), CL_MEM_READ_WRITE, blocked.back().size());
      cl::Event uploaded;
      q.enqueueWriteBuffer(src.back(), CL_FALSE, 0, weights.back().size(), weights.back().data(), nullptr, &uploaded);
      ReorderOptions opt;
      opt.wait_list = {uploaded};
      done.push_back(reorder(engine, src.back(), 0, from, dst.back(), 0, to, opt).event);
    }
    for (size_t l = 0; l < layers.size(); ++l) {
      const std::vector<cl::Event> after = {done[l]};
      q.enqueueReadBuffer(dst[l], CL_FALSE, 0, blocked[l].size(), blocked[l].data(), &after);
    }
    q.finish();
    size_t bad = 0;
    for (size_t l = 0; l < layers.size(); ++l) {
      std::vector<uint8_t> want(blocked[l].size());
      reference_reorder(layers[l].first, weights[l].data(), layers[l].second, want.data());
      bad += want != blocked[l];
    }
    std::printf("model_load_cpp: %zu layers reordered, %s\n", layers.size(), bad ? "MISMATCH" : "every weight in place");
    return bad ? 1 : 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "model_load_cpp: %s\n", e.what());
    return 2;
  }
}
