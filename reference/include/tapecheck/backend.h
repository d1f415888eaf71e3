// What a tape needs from the arithmetic underneath it. Tape<Backend> (tape.h) owns every piece
// of docs/spec.md that is not arithmetic -- validation order, error strings, empty and scalar cases,
// requiresGrad, the pullback wiring and dense backward -- and asks a Backend only for the
// native primitives on non-empty, non-scalar data. The primitives mirror kernel ABI v1
// (device/include/tapecheck/kernels_v1.h) one to one, so the reference tape (Eigen, generic in
// its scalar) and the device tape (LibTorch buffers + a kernel table) share all the rest.
//
// A Backend provides:
//   using Buffer = ...;                       // a flat, contiguous buffer of numbers
//   Dim count(const Buffer&) const;
//   Result<Buffer> copy(const Buffer&) const;
//   Result<Buffer> filled(Dim n, double value) const;
//   Result<Buffer> add(const Buffer&, const Buffer&) const;
//   Result<Buffer> fromHost(const std::vector<double>&) const;   // values rounded to Scalar
//   std::vector<double> toHost(const Buffer&) const;             // rounded to binary64
//   std::string description() const;                             // e.g. "reference-binary64"
//   Result<Buffer> softmaxFwd(RowFold, const Buffer& x) const;
//   Result<Buffer> softmaxBwd(RowFold, const Buffer& y, const Buffer& dy) const;
//   Result<Buffer> logSoftmaxFwd(RowFold, const Buffer& x) const;
//   Result<Buffer> logSoftmaxBwd(RowFold, const Buffer& y, const Buffer& dy) const;
//   Result<Buffer> topkMask(RowFold, std::uint32_t k, const Buffer& x) const;
//   Result<NormForward<Buffer>> layerNormFwd(RowFold, double eps, x, gamma, beta) const;
//   Result<NormBackward<Buffer>> layerNormBwd(RowFold, dy, xhat, invStd, gamma) const;
//   Result<NormForward<Buffer>> batchNormFwd(RowFold /*channels x S*/, double eps, ...) const;
//   Result<NormBackward<Buffer>> batchNormBwd(RowFold, dy, xhat, invStd, gamma) const;
//   Result<CrossEntropyForward<Buffer>> crossEntropyFwd(AxisFold, bool mean, logits, target) const;
//   Result<CrossEntropyBackward<Buffer>> crossEntropyBwd(AxisFold, bool mean, dloss, logp,
//                                                        target) const;
//   Result<Buffer> softmaxAxis(AxisFold, const Buffer& x) const;   // distill's teacher
#pragma once

namespace tapecheck {

template <class Buffer>
struct NormForward {
  Buffer y;
  Buffer xhat;
  Buffer invStd;  // one per row (layerNorm) or per channel (batchNorm)
};

template <class Buffer>
struct NormBackward {
  Buffer dx;
  Buffer dgamma;
  Buffer dbeta;
};

template <class Buffer>
struct CrossEntropyForward {
  Buffer loss;  // one element
  Buffer logp;  // saved for the pullback, same size as logits
};

template <class Buffer>
struct CrossEntropyBackward {
  Buffer dlogits;
  Buffer dtarget;
};

}  // namespace tapecheck
