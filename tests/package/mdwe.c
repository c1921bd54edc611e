// mdwe: runs a program under the seccomp filter that systemd 252 installs for
// MemoryDenyWriteExecute=yes (src/shared/seccomp-util.c, seccomp_memory_deny_write_execute): on
// x86-64, mmap asking for PROT_WRITE|PROT_EXEC, mprotect or pkey_mprotect asking for PROT_EXEC,
// and shmat with SHM_EXEC fail with EPERM. Not built by CI: it is how docs/operations.md's
// "MemoryDenyWriteExecute=" row was measured, kept so that the measurement can be repeated (on a
// new SpiderMonkey, or once the sandbox disables the JIT):
//
//   cc -O2 -o /tmp/mdwe tests/package/mdwe.c
//   /tmp/mdwe build/release/hookrelay serve --data /tmp/mdwe-data   # SIGSEGV at start today
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARCH (offsetof(struct seccomp_data, arch))
#define NR (offsetof(struct seccomp_data, nr))
#define ARG2 (offsetof(struct seccomp_data, args[2]))

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: mdwe PROGRAM [ARGS...]\n");
    return 2;
  }
  struct sock_filter filter[] = {
      /* 0*/ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARCH),
      /* 1*/ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      /* 2*/ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      /* 3*/ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
      /* 4*/ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 0, 3),
      /* 5*/ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG2),
      /* 6*/ BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 6 /* PROT_WRITE|PROT_EXEC */),
      /* 7*/ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 6, 8, 7),  // both: 16 (deny), else 15
      /* 8*/ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 2, 0),
      /* 9*/ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pkey_mprotect, 1, 0),
      /*10*/ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_shmat, 2, 4),
      /*11*/ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG2),
      /*12*/ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 4 /* PROT_EXEC */, 3, 2),
      /*13*/ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG2),
      /*14*/ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0100000 /* SHM_EXEC */, 1, 0),
      /*15*/ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      /*16*/ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    perror("mdwe: seccomp");
    return 1;
  }
  execvp(argv[1], argv + 1);
  perror("mdwe: exec");
  return 127;
}
