/* ping: rank 0 sends N floats to rank 1, which adds 1 to each and sends them back; rank 0 checks
 * every value. The buffers live on the GPU when one is visible, else in host memory: the buffer
 * tag (MPIGPU_BUF_GPU or MPIGPU_BUF_HOST) tells mpigpu which, so it never has to ask the driver.
 *
 *   mpigpucc ping.c -o ping -lcudart      (with the CUDA toolkit's include and lib paths)
 *   mpigpurun -n 2 ./ping                 prints "ping: 2 ranks, <where> buffers, ok"
 *
 * docs/api.md walks through it; //docs/examples:ping_test builds and runs it with 2 ranks. */
#include <cuda_runtime_api.h>
#include <mpigpu.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4096

/* Returns 0 on success; prints the API's message otherwise. */
static int Check(int err, const char* what) {
  char msg[MPIGPU_MAX_ERROR_STRING];
  int len = 0;
  if (err == MPIGPU_SUCCESS) return 0;
  MPIGPU_Error_string(err, msg, &len);
  fprintf(stderr, "ping: %s: %s\n", what, msg);
  return 1;
}

int main(int argc, char** argv) {
  int rank, size, ngpus = 0, i, bad = 0;
  float host[N];
  void* buf;
  MPIGPU_Buftype tag;

  /* Errors come back as codes instead of ending the job. */
  if (MPIGPU_Init(&argc, &argv) != MPIGPU_SUCCESS) return 2;
  MPIGPU_Comm_set_errhandler(MPIGPU_COMM_WORLD, MPIGPU_ERRORS_RETURN);
  MPIGPU_Comm_rank(MPIGPU_COMM_WORLD, &rank);
  MPIGPU_Comm_size(MPIGPU_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "ping: run with 2 ranks (mpigpurun -n 2)\n");
    MPIGPU_Finalize();
    return 2;
  }

  /* MPIGPU_Init made a device current (local rank mod visible devices). */
  if (cudaGetDeviceCount(&ngpus) != cudaSuccess) ngpus = 0;
  for (i = 0; i < N; ++i) host[i] = (float)i;
  if (ngpus > 0) {
    if (cudaMalloc(&buf, sizeof host) != cudaSuccess) return 3;
    cudaMemcpy(buf, host, sizeof host, cudaMemcpyHostToDevice);
    tag = MPIGPU_BUF_GPU;
  } else {
    buf = host;
    tag = MPIGPU_BUF_HOST;
  }

  if (rank == 0) {
    if (Check(MPIGPU_Send(buf, tag, N, MPIGPU_FLOAT, 1, 0, MPIGPU_COMM_WORLD), "send") ||
        Check(MPIGPU_Recv(buf, tag, N, MPIGPU_FLOAT, 1, 0, MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE),
              "receive"))
      bad = 1;
  } else {
    if (Check(MPIGPU_Recv(buf, tag, N, MPIGPU_FLOAT, 0, 0, MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE),
              "receive"))
      bad = 1;
    if (!bad && ngpus > 0) cudaMemcpy(host, buf, sizeof host, cudaMemcpyDeviceToHost);
    for (i = 0; i < N; ++i) host[i] += 1.0f;
    if (!bad && ngpus > 0) cudaMemcpy(buf, host, sizeof host, cudaMemcpyHostToDevice);
    if (!bad && Check(MPIGPU_Send(buf, tag, N, MPIGPU_FLOAT, 0, 0, MPIGPU_COMM_WORLD), "send"))
      bad = 1;
  }

  if (rank == 0 && !bad) {
    if (ngpus > 0) cudaMemcpy(host, buf, sizeof host, cudaMemcpyDeviceToHost);
    for (i = 0; i < N; ++i)
      if (host[i] != (float)i + 1.0f) {
        fprintf(stderr, "ping: element %d is %g, expected %g\n", i, host[i], (float)i + 1.0f);
        bad = 1;
        break;
      }
    if (!bad) printf("ping: 2 ranks, %s buffers, ok\n", ngpus > 0 ? "GPU" : "host");
  }
  if (ngpus > 0) cudaFree(buf);
  MPIGPU_Finalize();
  return bad;
}
