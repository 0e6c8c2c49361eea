#include "model/distribution.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace ccfs {

namespace {

class ParetoDistribution final : public AccessDistribution {
 public:
  ParetoDistribution(const DistSpec& spec, uint64_t pages, uint64_t seed)
      : AccessDistribution(spec, pages, seed),
        exponent_(std::log(spec.hot_fraction) / std::log1p(-spec.hot_fraction)),
        n_(static_cast<double>(pages)) {}

  uint64_t NextRank(Rng& rng) const override {
    // u < 1 and E > 0 keep N * u^E below N mathematically; the clamp guards rounding at the top.
    uint64_t rank = static_cast<uint64_t>(n_ * std::pow(rng.NextDouble(), exponent_));
    return rank < pages() ? rank : pages() - 1;
  }

  double HotShare(double hottest) const override {
    if (hottest <= 0) return 0.0;
    if (hottest >= n_) return 1.0;
    return std::pow(hottest / n_, 1.0 / exponent_);
  }

 private:
  double exponent_;  // E = ln h / ln(1-h)
  double n_;
};

class UniformDistribution final : public AccessDistribution {
 public:
  UniformDistribution(const DistSpec& spec, uint64_t pages, uint64_t seed)
      : AccessDistribution(spec, pages, seed) {}

  uint64_t NextRank(Rng& rng) const override { return rng.Below(pages()); }

  double HotShare(double hottest) const override {
    if (hottest <= 0) return 0.0;
    double share = hottest / static_cast<double>(pages());
    return share < 1.0 ? share : 1.0;
  }
};

// Rejection-inversion sampling of the Zipf law on ranks k = 1..N with weight h(k) = k^-theta.
// H is an antiderivative of h; a draw inverts H at a uniform point of [H(1.5) - 1, H(N + 0.5)],
// rounds to the nearest integer k, and accepts when the point lies under the step of height h(k)
// (always when k is within `s_` of the continuous draw). The acceptance rate is high for all theta.
class ZipfDistribution final : public AccessDistribution {
 public:
  ZipfDistribution(const DistSpec& spec, uint64_t pages, uint64_t seed)
      : AccessDistribution(spec, pages, seed), theta_(spec.theta) {
    h_integral_x1_ = HIntegral(1.5) - 1.0;
    h_integral_n_ = HIntegral(static_cast<double>(pages) + 0.5);
    s_ = 2.0 - HIntegralInverse(HIntegral(2.5) - H(2.0));
    // Normalisation for HotShare: the generalised harmonic number H_{N,theta}.
    total_weight_ = HarmonicSum(static_cast<double>(pages));
  }

  uint64_t NextRank(Rng& rng) const override {
    const double n = static_cast<double>(pages());
    for (;;) {
      double u = h_integral_n_ + rng.NextDouble() * (h_integral_x1_ - h_integral_n_);
      double x = HIntegralInverse(u);
      double k = std::floor(x + 0.5);
      if (k < 1.0) k = 1.0;
      if (k > n) k = n;
      if (k - x <= s_ || u >= HIntegral(k + 0.5) - H(k)) return static_cast<uint64_t>(k) - 1;
    }
  }

  double HotShare(double hottest) const override {
    if (hottest <= 0) return 0.0;
    if (hottest >= static_cast<double>(pages())) return 1.0;
    return HarmonicSum(std::floor(hottest)) / total_weight_;
  }

 private:
  // log1p(x)/x and expm1(x)/x, continuous at 0 (theta = 1 makes their arguments 0).
  static double Log1pOverX(double x) {
    return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x / 3.0);
  }
  static double Expm1OverX(double x) {
    return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * (0.5 + x / 6.0);
  }
  double H(double x) const { return std::exp(-theta_ * std::log(x)); }
  // (x^(1-theta) - 1) / (1 - theta), or ln x at theta = 1.
  double HIntegral(double x) const {
    double log_x = std::log(x);
    return Expm1OverX((1.0 - theta_) * log_x) * log_x;
  }
  double HIntegralInverse(double y) const {
    double t = y * (1.0 - theta_);
    if (t < -1.0) t = -1.0;  // rounding can push it just past the pole
    return std::exp(Log1pOverX(t) * y);
  }
  // sum_{k=1}^{m} k^-theta: exact up to 10^6 terms, then Euler–Maclaurin for the tail.
  double HarmonicSum(double m) const {
    constexpr double kExactTerms = 1e6;
    double exact_to = m < kExactTerms ? m : kExactTerms;
    double sum = 0.0;
    for (double k = exact_to; k >= 1.0; k -= 1.0) sum += H(k);  // small terms first
    if (m > exact_to) {
      // integral from a to m of x^-theta dx + (f(m) - f(a)) / 2, with a = exact_to.
      double a = exact_to;
      sum += HIntegral(m) - HIntegral(a) + (H(m) - H(a)) / 2.0;
    }
    return sum;
  }

  double theta_;
  double h_integral_x1_;
  double h_integral_n_;
  double s_;
  double total_weight_;
};

bool ParseDouble(const std::string& text, double* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(*value);
}

}  // namespace

std::string DistSpec::ToString() const {
  switch (kind) {
    case Kind::kPareto: return fmt::format("pareto:{:g}", hot_fraction);
    case Kind::kUniform: return "uniform";
    case Kind::kZipf: return fmt::format("zipf:{:g}", theta);
  }
  return "?";
}

Status ParseDistSpec(const std::string& text, double hot_fraction, DistSpec* spec) {
  std::string name = text, arg;
  if (size_t colon = text.find(':'); colon != std::string::npos) {
    name = text.substr(0, colon);
    arg = text.substr(colon + 1);
  }
  DistSpec out;
  if (name == "pareto") {
    out.kind = DistSpec::Kind::kPareto;
    out.hot_fraction = hot_fraction;
    if (!arg.empty() && !ParseDouble(arg, &out.hot_fraction)) {
      return Status::InvalidArgument(
          fmt::format("--dist {}: '{}' is not a number (pareto:H, H the hot fraction, e.g. 0.2)",
                      text, arg));
    }
    if (!(out.hot_fraction > 0.0 && out.hot_fraction <= 0.5)) {
      return Status::InvalidArgument(fmt::format(
          "--dist {}: hot fraction {:g} must be above 0 and at most 0.5 (0.2 = 80/20, 0.5 = uniform)", text,
          out.hot_fraction));
    }
  } else if (name == "uniform") {
    if (!arg.empty()) {
      return Status::InvalidArgument(fmt::format("--dist {}: uniform takes no parameter", text));
    }
    out.kind = DistSpec::Kind::kUniform;
  } else if (name == "zipf") {
    out.kind = DistSpec::Kind::kZipf;
    if (!arg.empty() && !ParseDouble(arg, &out.theta)) {
      return Status::InvalidArgument(
          fmt::format("--dist {}: '{}' is not a number (zipf:THETA, e.g. zipf:0.99)", text, arg));
    }
    if (!(out.theta > 0.0 && out.theta <= 10.0)) {
      return Status::InvalidArgument(
          fmt::format("--dist {}: theta {:g} must be above 0 and at most 10", text, out.theta));
    }
  } else {
    return Status::InvalidArgument(fmt::format(
        "--dist {}: unknown distribution (use pareto, pareto:H, uniform or zipf:THETA)", text));
  }
  *spec = out;
  return Status::Ok();
}

Status NewAccessDistribution(const DistSpec& spec, uint64_t pages, uint64_t seed,
                             std::unique_ptr<AccessDistribution>* dist) {
  if (pages == 0) return Status::InvalidArgument("the data set has no pages to draw from");
  switch (spec.kind) {
    case DistSpec::Kind::kPareto:
      if (!(spec.hot_fraction > 0.0 && spec.hot_fraction <= 0.5)) {
        return Status::InvalidArgument(
            fmt::format("hot fraction {:g} must be above 0 and at most 0.5", spec.hot_fraction));
      }
      dist->reset(new ParetoDistribution(spec, pages, seed));
      return Status::Ok();
    case DistSpec::Kind::kUniform:
      dist->reset(new UniformDistribution(spec, pages, seed));
      return Status::Ok();
    case DistSpec::Kind::kZipf:
      if (!(spec.theta > 0.0 && spec.theta <= 10.0)) {
        return Status::InvalidArgument(
            fmt::format("zipf theta {:g} must be above 0 and at most 10", spec.theta));
      }
      dist->reset(new ZipfDistribution(spec, pages, seed));
      return Status::Ok();
  }
  return Status::InvalidArgument("unknown distribution");
}

}  // namespace ccfs
