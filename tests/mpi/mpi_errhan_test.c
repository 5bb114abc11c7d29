/* Error handlers and error codes: MPI_ERRORS_RETURN, a user handler (called with the code,
 * inherited by Comm_dup), Comm_call_errhandler, Error_class/Error_string, added error classes
 * and codes, MPI_ERR_UNSUPPORTED_OPERATION from a call mpigpu does not have, error strings that
 * name the MPI call, and a second MPI_Init. */
#include <string.h>

#include "mpi_test.h"

static int calls = 0, last_code = 0;
static MPI_Comm last_comm = MPI_COMM_NULL;

static void handler(MPI_Comm* comm, int* code, ...) {
  ++calls;
  last_code = *code;
  last_comm = *comm;
}

int main(int argc, char** argv) {
  int rank, size, cls = -1, len = 0, v = 0, newclass, newcode;
  char text[MPI_MAX_ERROR_STRING];
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got;
  MPI_Comm dup;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  CHECK_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
  CHECK(got == MPI_ERRORS_ARE_FATAL);
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  {
    int rc = MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD); /* no such rank */
    CHECK(rc != MPI_SUCCESS);
    CHECK_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_RANK);
    CHECK_OK(MPI_Error_string(rc, text, &len));
    CHECK(len > 0 && (int)strlen(text) == len);
    rc = MPI_Send(&v, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
    CHECK_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_TAG);
    rc = MPI_Send(&v, 1, MPI_INT, 0, 0, (MPI_Comm)12345);
    CHECK_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_COMM);
    /* The message names the MPI call, not the core's calls behind it (the handler lookup on the
     * invalid communicator fails too). */
    CHECK_OK(MPI_Error_string(rc, text, &len));
    CHECK(strstr(text, "MPI_Send: ") != NULL && strstr(text, "MPIGPU_") == strstr(text, "MPIGPU_ERR_"));
    CHECK(strstr(text, "errhandler") == NULL);
    rc = MPI_Barrier((MPI_Comm)12345);
    CHECK_OK(MPI_Error_string(rc, text, &len));
    CHECK(strstr(text, "MPI_Barrier: ") != NULL && strstr(text, "errhandler") == NULL);
    rc = MPI_Comm_size((MPI_Comm)12345, &v);
    CHECK_OK(MPI_Error_string(rc, text, &len));
    CHECK(strstr(text, "MPI_Comm_size: ") != NULL && strstr(text, "errhandler") == NULL);
    v = 0;
    /* A second MPI_Init is erroneous: class MPI_ERR_OTHER, WORLD's handler left as it was. */
    rc = MPI_Init(&argc, &argv);
    CHECK_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_OTHER);
    CHECK_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == MPI_ERRORS_RETURN);
    rc = MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    CHECK_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_COUNT);
    rc = MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &dup);
    CHECK_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION || cls == MPI_ERR_COMM);
  }

  CHECK_OK(MPI_Comm_create_errhandler(handler, &eh));
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
  CHECK_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
  CHECK(got == eh);
  CHECK(MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD) != MPI_SUCCESS);
  CHECK(calls == 1 && last_comm == MPI_COMM_WORLD);
  CHECK_OK(MPI_Error_class(last_code, &cls));
  CHECK(cls == MPI_ERR_RANK);
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK_OK(MPI_Comm_get_errhandler(dup, &got));
  CHECK(got == eh); /* inherited */
  CHECK(MPI_Recv(&v, 1, MPI_INT, 0, -7, dup, MPI_STATUS_IGNORE) != MPI_SUCCESS);
  CHECK(calls == 2 && last_comm == dup);
  CHECK_OK(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
  CHECK(calls == 3 && last_code == MPI_ERR_OTHER);
  CHECK_OK(MPI_Errhandler_free(&eh));
  CHECK(eh == MPI_ERRHANDLER_NULL);
  /* Still attached to WORLD and dup after the free. */
  CHECK(MPI_Send(&v, 1, MPI_INT, size, 0, dup) != MPI_SUCCESS);
  CHECK(calls == 4);
  CHECK_OK(MPI_Comm_free(&dup));
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

  /* Added classes, codes and strings. */
  CHECK_OK(MPI_Add_error_class(&newclass));
  CHECK(newclass > MPI_ERR_LASTCODE);
  CHECK_OK(MPI_Add_error_code(newclass, &newcode));
  CHECK(newcode > MPI_ERR_LASTCODE && newcode != newclass);
  CHECK_OK(MPI_Add_error_string(newcode, "my error"));
  CHECK_OK(MPI_Error_class(newcode, &cls));
  CHECK(cls == newclass);
  CHECK_OK(MPI_Error_string(newcode, text, &len));
  CHECK(strcmp(text, "my error") == 0 && len == 8);
  CHECK(MPI_Error_class(-3, &cls) != MPI_SUCCESS);
  return mt_finish();
}
