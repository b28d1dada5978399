#version 450
// y[t * rows + r] = W[r] . x[t] for one token t (a few tokens: one each in z), kLanes threads a
// row: the workgroup's 64 threads are 64 / kLanes slots; a slot takes kSlotRows rows and its
// lanes take the rows' 32-column units in turn. Every thread has work on rows of any width
// that is a multiple of kLanes units (matvec.comp's 64 threads a row leave a quarter idle on
// 1536 columns), and where the device's subgroups hold a slot (SUBGROUPS, and subgroups of
// at least kLanes threads in this pipeline) the rows' sums are added within the slot's
// subgroup cluster: no shared memory, no barrier. Otherwise they go through shared memory. With GLU a slot takes row r of the gate and
// row r of up (W stacks them: rows = 2 ff) and writes act(gate . x) * (up . x). kNorm: the
// input rows are RMS-normalized on the way, as in matvec.comp.
#extension GL_GOOGLE_include_directive : require
#if defined(SUBGROUPS)
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_clustered : require
#endif

layout(local_size_x = 64) in;
#include "matrix_io.glsl"
#include "units.glsl"
#include "activation.glsl"

const uint kLanes = 16u, kSlots = 64u / kLanes;
#if defined(GLU)
const uint kSlotRows = 2u;  // the gate's row, then up's
uint outputs() { return p.rows / 2u; }
uint row_of(uint r, uint i) { return i == 0u ? r : p.rows / 2u + r; }
bool row_in(uint r, uint i) { return r < p.rows / 2u; }
#else
const uint kSlotRows = 2u;  // consecutive rows
uint outputs() { return (p.rows + 1u) / 2u; }
uint row_of(uint r, uint i) { return 2u * r + i; }
bool row_in(uint r, uint i) { return 2u * r + i < p.rows; }
#endif

shared float partial[kSlotRows + 1u][64];

void main() {
  // Workgroups beyond the 65535 of one dimension continue in y.
  const uint group = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y;
  const uint t = gl_WorkGroupID.z, lid = gl_LocalInvocationID.x, lane = lid % kLanes;
  const uint r = group * kSlots + lid / kLanes;  // the slot's output
  const bool live = r < outputs();
  float acc[kSlotRows + 1u];  // the rows' sums, then the input's sum of squares (kNorm)
  for (uint i = 0u; i <= kSlotRows; ++i) acc[i] = 0.0;
  const uint units = live ? p.cols / 32u : 0u, xt = (t * p.cols) >> 2;
  const bool norm = (p.flags & kNorm) != 0u;
  for (uint u = lane; u < units; u += kLanes) {
    vec4 xv[8];  // the unit's inputs, read once for the slot's rows
    for (uint k = 0u; k < 8u; ++k) xv[k] = x4[xt + u * 8u + k];
    if (norm)
      for (uint k = 0u; k < 8u; ++k) {
        acc[kSlotRows] += dot(xv[k], xv[k]);
        xv[k] *= gain4[u * 8u + k];
      }
    for (uint i = 0u; i < kSlotRows; ++i) {
      if (!row_in(r, i)) continue;
      vec4 v[8];
      unit_load(row_of(r, i) * p.row_u16, u, v);
      float a = 0.0;
      for (uint k = 0u; k < 8u; ++k) a += dot(v[k], xv[k]);
      acc[i] += a;
    }
  }
#if defined(SUBGROUPS)
  // Some drivers (Intel's) pick the subgroup size per pipeline: gl_SubgroupSize is this one's.
  const bool clusters = gl_SubgroupSize >= kLanes;
#else
  const bool clusters = false;
#endif
  if (clusters) {
#if defined(SUBGROUPS)
    for (uint i = 0u; i <= kSlotRows; ++i) acc[i] = subgroupClusteredAdd(acc[i], kLanes);
#endif
  } else {
    for (uint i = 0u; i <= kSlotRows; ++i) partial[i][lid] = acc[i];
    barrier();
    for (uint i = 0u; i <= kSlotRows; ++i) {
      float s = 0.0;
      for (uint j = lid - lane; j < lid - lane + kLanes; ++j) s += partial[i][j];
      acc[i] = s;
    }
  }
  if (!live || lane != 0u) return;
  const float scale = norm ? inversesqrt(acc[kSlotRows] / float(p.cols) + p.eps) : 1.0;
#if defined(GLU)
  y[t * outputs() + r] = activation(acc[0] * scale, (p.flags & kGelu) != 0u) * (acc[1] * scale);
#else
  for (uint i = 0u; i < kSlotRows; ++i)
    if (row_in(r, i)) store(t, row_of(r, i), acc[i] * scale);
#endif
}
