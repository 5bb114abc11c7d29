#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>
#include <sys/syscall.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(void){
  const int n=20000; volatile unsigned long long s=0;
  double t0=now(); for(int i=0;i<n;i++){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);s+=t.tv_nsec;} double t1=now();
  for(int i=0;i<n;i++) s+=__rdtsc(); double t2=now();
  for(int i=0;i<n;i++) s+=syscall(SYS_getppid); double t3=now();
  printf("clock_gettime %.3f us  rdtsc %.3f us  getppid syscall %.3f us\n",(t1-t0)/n*1e6,(t2-t1)/n*1e6,(t3-t2)/n*1e6);
  return 0;}
