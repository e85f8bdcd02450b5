/* multiversion.h (private): hot kernels are compiled for AVX-512, AVX2 and baseline
 * x86-64, and the loader picks one per CPU (GCC on x86-64 Linux; elsewhere a single
 * baseline build). */
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define LDP_MULTIVERSION __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define LDP_MULTIVERSION
#endif
