// Which threaded build the training worker loads. A plain script, neither module nor classic
// only: worker.js (a module worker) imports it and the service worker (a classic one) runs it
// with `importScripts`; both then read `globalThis.bertbenchCpuBuilds`. The tests import it in
// Node (tests/e2e/cpu_builds.test.mjs).
//
// `cargo xtask` builds the threaded wasm twice: with 128-bit SIMD, which every browser with wasm
// threads has, and with relaxed SIMD in core's matrix kernel too (`f32x4.relaxed_madd`, a fused
// multiply-add where the CPU has one: faster products, see docs/performance.md). A module that
// uses relaxed SIMD does not validate in a browser without it, so the relaxed build is only tried
// where a one-instruction module using the same instruction validates.
(() => {
  const V128_ZERO = [0xfd, 0x0c, ...new Array(16).fill(0)];

  /** `(func (result v128) (f32x4.relaxed_madd (v128.const 0) (v128.const 0) (v128.const 0)))`. */
  const RELAXED_SIMD_PROBE = new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
    0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // types: () -> v128
    0x03, 0x02, 0x01, 0x00, // one function of that type
    0x0a, 0x3d, 0x01, 0x3b, 0x00, // code: one body of 59 bytes, no locals
    ...V128_ZERO, ...V128_ZERO, ...V128_ZERO,
    0xfd, 0x85, 0x02, // f32x4.relaxed_madd
    0x0b, // end
  ]);

  /** Whether this browser's WebAssembly has relaxed SIMD (`validate` is for the tests). */
  function hasRelaxedSimd(validate = (bytes) => WebAssembly.validate(bytes)) {
    try {
      return validate(RELAXED_SIMD_PROBE) === true;
    } catch {
      return false;
    }
  }

  /**
   * The threaded bundles to try, best first, from the URLs the page posts (`threaded`,
   * `threadedRelaxed`; either may be missing): the relaxed one where `relaxed`, then the
   * baseline one, so a relaxed bundle that fails to start still leaves threads.
   */
  function threadedCandidates({ threaded, threadedRelaxed }, relaxed = hasRelaxedSimd()) {
    const candidates = [];
    if (threadedRelaxed && relaxed) candidates.push({ url: threadedRelaxed, relaxed: true });
    if (threaded) candidates.push({ url: threaded, relaxed: false });
    return candidates;
  }

  /**
   * Whether `file` (a path in the build, as the service worker lists them) belongs to the
   * threaded build this browser does not load first: the baseline one where it has relaxed
   * SIMD, the relaxed one where it has not. The service worker leaves those files out of the
   * offline copy (offline, a relaxed build that fails to start then falls back to one thread).
   */
  function unusedThreadedFile(file, relaxed = hasRelaxedSimd()) {
    return relaxed ? /^threads-[0-9a-f]{16}\//.test(file) : /^threads-relaxed-[0-9a-f]{16}\//.test(file);
  }

  globalThis.bertbenchCpuBuilds = { RELAXED_SIMD_PROBE, hasRelaxedSimd, threadedCandidates, unusedThreadedFile };
})();
