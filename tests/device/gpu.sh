#!/bin/sh
# gpu.sh: hako with a real NVIDIA GPU through CDI (docs/gpus.md).  Not part
# of `make check`.  Needs root, the driver (nvidia-smi) and either
# nvidia-ctk or a CDI spec already in /etc/cdi or /var/run/cdi.
#   sudo HAKO=$PWD/hako sh tests/device/gpu.sh
# GPU_IMAGE: an imported image for the image-sandbox check (default busybox).
# Prints one line "gpu.sh: PASS" or "gpu.sh: FAIL (...)"; exits 0, 1, or 77
# (skipped: no GPU here).
set -u
HAKO=${HAKO:-hako}
IMAGE=${GPU_IMAGE:-busybox}
tmp=$(mktemp -d /tmp/hako-gpu.XXXXXX)
chmod 711 "$tmp"
H="$HAKO --root $tmp/state --data-root ${GPU_DATA_ROOT:-$tmp/data}"
failed=""
fail () { failed="$failed${failed:+; }$*"; echo "gpu.sh: not ok: $*" >&2; }
cleanup () {
  for id in $(ls "$tmp/state" 2>/dev/null); do $H delete --force "$id" >/dev/null 2>&1; done
  rm -rf "$tmp"
}
trap cleanup EXIT

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu.sh: SKIP (no NVIDIA GPU or driver here)"
  exit 77
fi

# The spec: generated now when nvidia-ctk is here, else the host's.
if command -v nvidia-ctk >/dev/null 2>&1; then
  mkdir "$tmp/cdi"
  if timeout 120 nvidia-ctk cdi generate --output="$tmp/cdi/nvidia.yaml" >"$tmp/ctk.log" 2>&1; then
    H="$H --cdi-spec-dir $tmp/cdi"
  else
    fail "nvidia-ctk cdi generate: $(tail -1 "$tmp/ctk.log")"
  fi
fi
devices=$($H features | jq -r '.annotations["io.hako.cdi.devices"] // ""')
case ",$devices," in
  *,nvidia.com/gpu=0,*) dev=nvidia.com/gpu=0 ;;
  *,nvidia.com/gpu=all,*) dev=nvidia.com/gpu=all ;;
  *) fail "no nvidia.com/gpu device in the CDI specs (found: ${devices:-none})"; dev="" ;;
esac
want=$(nvidia-smi -L | head -1)

if [ -n "$dev" ]; then
  echo "gpu.sh: device $dev; host sees: $want"
  # 1. The host profile: the host's /usr, the spec's nodes and mounts.
  out=$(timeout 120 $H run --rm --profile host --device "$dev" gpu-host -- nvidia-smi -L 2>&1)
  case "$out" in
    *"$want"*) echo "gpu.sh: ok: host profile: $(echo "$out" | head -1)" ;;
    *) fail "host profile: nvidia-smi -L said: $(echo "$out" | tail -2 | tr '\n' ' ')" ;;
  esac
  # 2. An image sandbox: nvidia-smi and the libraries come from the spec's mounts.
  if $H image inspect "$IMAGE" >/dev/null 2>&1; then
    out=$(timeout 120 $H run --rm --image "$IMAGE" --device "$dev" gpu-image -- nvidia-smi -L 2>&1)
    case "$out" in
      *"$want"*) echo "gpu.sh: ok: image $IMAGE: $(echo "$out" | head -1)" ;;
      *) fail "image $IMAGE: nvidia-smi -L said: $(echo "$out" | tail -2 | tr '\n' ' ')" ;;
    esac
  else
    echo "gpu.sh: skip: image sandbox (no image $IMAGE under the data root; import one, or set GPU_IMAGE/GPU_DATA_ROOT)"
  fi
  # 3. A CUDA device query, when a toolkit is here.
  if command -v nvcc >/dev/null 2>&1; then
    cat > "$tmp/q.cu" <<'CU'
#include <cstdio>
#include <cuda_runtime.h>
int main () {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount (&n);
  if (e != cudaSuccess) { printf ("cuda: %s\n", cudaGetErrorString (e)); return 1; }
  cudaDeviceProp p;
  cudaGetDeviceProperties (&p, 0);
  printf ("cuda: %d device(s), 0: %s\n", n, p.name);
  return n > 0 ? 0 : 1;
}
CU
    if timeout 120 nvcc -o "$tmp/q" "$tmp/q.cu" >"$tmp/nvcc.log" 2>&1; then
      chmod 755 "$tmp/q"
      out=$(timeout 60 $H run --rm --profile host --device "$dev" gpu-cuda -- "$tmp/q" 2>&1) \
        && echo "gpu.sh: ok: $out" || fail "CUDA query: $out"
    else
      fail "nvcc: $(tail -1 "$tmp/nvcc.log")"
    fi
  else
    echo "gpu.sh: skip: CUDA query (no nvcc)"
  fi
  # 4. Admission: one exclusive slot.
  echo "{\"devices\":{\"$dev\":{\"mode\":\"exclusive\"}}}" > "$tmp/node.json"
  N="$H --node-config $tmp/node.json"
  $N run -d --profile host --device "$dev" gpu-a -- sleep 30 >/dev/null 2>&1 || fail "admission: first create refused"
  if $N run -d --profile host --device "$dev" gpu-b -- sleep 30 >/dev/null 2>&1; then
    fail "admission: a second sandbox got the exclusive $dev"
  fi
  $N stop gpu-a >/dev/null 2>&1
  $N run -d --profile host --device "$dev" gpu-c -- true >/dev/null 2>&1 || fail "admission: stop did not release $dev"
fi

if [ -z "$failed" ]; then
  echo "gpu.sh: PASS"
  exit 0
fi
echo "gpu.sh: FAIL ($failed)"
exit 1
