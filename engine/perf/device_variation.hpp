// Device-to-device performance variation: devices of one SKU do not run equally fast. Sinha et
// al. ("Not All GPUs Are Created Equal: Characterizing Variability in Large-Scale,
// Accelerator-Rich Systems", SC'22) measured over 90% of the GPUs of five clusters (V100,
// MI60) and found 8% (max 22%) average performance variation between GPUs of the same SKU,
// from manufacturing variation under the chip's power management, whatever the application or
// cooling. A synchronous training job (every iteration ends in collectives over all of its
// devices, and its tensor-parallel collectives wait for every member) runs at the pace of its
// slowest device: the larger the job, the slower the expected slowest.
//
// Each device's pace is taken as normally distributed about the median with a relative
// standard deviation sigma (the template's core.device_variation), devices independent; the
// expected slowest of n is then 1 + sigma * E[max of n standard normals] times slower than the
// median. The template's sustained_fraction is fitted on jobs of a known size (its
// core.sustained_devices), whose slowest device it already includes: a job of n devices runs at
//   pace(n) = (1 + sigma * e(fitted)) / (1 + sigma * e(n))
// of the rate the template states (1 at the fitted size, above it for fewer devices).
#pragma once

namespace pathfinder {

// E[max of n independent standard normal variables] (0 for n <= 1), by Blom's approximation
// Phi^-1((n - 0.375) / (n + 0.25)) (Blom 1958; within 0.03 of the exact integral from n = 2
// to 16,384: e.g. 1.434 against 1.424 at n = 8, 3.20 against 3.19 at n = 1,024).
[[nodiscard]] double expected_max_standard_normal(long long n);

// The standard normal quantile Phi^-1(p) for p in (0, 1) (Acklam's rational approximation,
// relative error below 1.2e-9).
[[nodiscard]] double standard_normal_quantile(double p);

// The pace, against the template's rate, of a job of `devices` devices whose template states its
// rate for jobs of `fitted_devices` (above).
[[nodiscard]] double job_pace(double sigma, long long fitted_devices, long long devices);

}  // namespace pathfinder
