/* The bounded line reader: lines as getline gives them, a line above the bound and memory
 * running out mid-line reported with the file and the line (never taken as the end),
 * File_open_regular refusing what is not a regular file without blocking, and File_read_whole's
 * (and File_read_regular's) bound, exact at the limit. */
#include "testing.h"

#include "line_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static FILE *holding(const char *text, size_t length)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, length, f), length);
    rewind(f);
    return f;
}

static void test_lines(void **state)
{
    (void)state;
    char err[256];
    FILE *f = holding("one\n\ntw\0o\nlast", 14);
    LineReader r = LineReader_start(f, "f");
    const char *want[] = {"one\n", "\n", "tw\0o\n", "last"};
    const size_t length[] = {4, 1, 5, 4};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(LineReader_next(&r, err, sizeof err), LINE_READ);
        assert_int_equal(r.length, length[i]);
        assert_memory_equal(r.text, want[i], length[i]);
        assert_int_equal(r.text[r.length], '\0');
        assert_int_equal(r.number, i + 1);
    }
    assert_int_equal(LineReader_next(&r, err, sizeof err), LINE_END);
    LineReader_release(&r);
    fclose(f);
}

/* At the bound a line is read; one byte more is refused, naming the file and the line. */
static void test_bound(void **state)
{
    (void)state;
    char err[256];
    FILE *f = holding("12345678\n123456789\n", 19);
    LineReader r = LineReader_start(f, "small.txt");
    r.max = 9;
    assert_int_equal(LineReader_next(&r, err, sizeof err), LINE_READ);
    assert_int_equal(r.length, 9);
    assert_int_equal(LineReader_next(&r, err, sizeof err), LINE_TOO_LONG);
    assert_non_null(strstr(err, "small.txt:2: a line longer than"));
    assert_int_equal(LineStatus_exit_status(LINE_TOO_LONG), 2);
    LineReader_release(&r);
    fclose(f);
}

static long address_space_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

/* A 48 MiB line under an address-space limit 16 MiB above what the process holds: memory
   runs out mid-line, and that is LINE_NO_MEMORY with the line's number (getline's ENOMEM
   looked like the end).  In a child, whose limit dies with it. */
static void test_out_of_memory(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip(); /* AddressSanitizer reserves terabytes of address space: no limit can hold */
#endif
    size_t big = (size_t)48 << 20;
    FILE *f = tmpfile();
    assert_non_null(f);
    fputs("first\n", f);
    for (size_t i = 0; i < big; i++)
        putc('x', f);
    putc('\n', f);
    rewind(f);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        char err[256];
        LineReader r = LineReader_start(f, "big.txt");
        int first = LineReader_next(&r, err, sizeof err);
        struct rlimit limit;
        limit.rlim_cur = limit.rlim_max = (rlim_t)(address_space_kib() + 16 * 1024) * 1024;
        if (setrlimit(RLIMIT_AS, &limit) != 0)
            _exit(3);
        int second = LineReader_next(&r, err, sizeof err);
        _exit(first == LINE_READ && second == LINE_NO_MEMORY &&
                      strstr(err, "big.txt:2: out of memory reading a line")
                  ? 0
                  : 1);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    fclose(f);
}

static void test_only_regular_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/line-reader-XXXXXX", fifo[64], err[256];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    /* A FIFO with no writer: a blocking open would wait here for ever. */
    assert_null(File_open_regular(fifo, err, sizeof err));
    assert_non_null(strstr(err, "fifo': a FIFO, not a regular file"));
    assert_null(File_open_regular(dir, err, sizeof err));
    assert_non_null(strstr(err, "': Is a directory"));
    assert_null(File_open_regular("/dev/null", err, sizeof err));
    assert_string_equal(err, "'/dev/null': a character device, not a regular file");
    assert_null(File_open_regular("/nonexistent/x", err, sizeof err));
    assert_string_equal(err, "'/nonexistent/x': No such file or directory");
    /* File_read_regular: the open's refusal, then a regular file whole and its bound. */
    char *text, small[64];
    size_t length;
    assert_int_equal(File_read_regular(fifo, 16, &text, &length, err, sizeof err),
                     FILE_WHOLE_NOT_OPENED);
    assert_null(text);
    assert_non_null(strstr(err, "fifo': a FIFO, not a regular file"));
    snprintf(small, sizeof small, "%s/small", dir);
    FILE *w = fopen(small, "w");
    assert_non_null(w);
    fputs("xyz", w);
    fclose(w);
    assert_int_equal(File_read_regular(small, 3, &text, &length, err, sizeof err), FILE_WHOLE_READ);
    assert_string_equal(text, "xyz");
    free(text);
    assert_int_equal(File_read_regular(small, 2, &text, &length, err, sizeof err),
                     FILE_WHOLE_TOO_LARGE);
    assert_null(text);
    unlink(small);
    unlink(fifo);
    rmdir(dir);
    FILE *f = File_open_regular("Makefile", err, sizeof err);
    assert_non_null(f);
    int flags = fcntl(fileno(f), F_GETFL);
    assert_int_equal(flags & O_NONBLOCK, 0); /* reads block as usual once it is a file */
    fclose(f);
}

/* A file of exactly the limit is read whole and NUL-terminated; one byte more is too large;
   an empty file is read; a stream open only for writing fails to read, and says why. */
static void test_read_whole(void **state)
{
    (void)state;
    char *text;
    size_t length;
    int error = -1;
    FILE *f = holding("ab\0de", 5);
    assert_int_equal(File_read_whole(f, 5, &text, &length, &error), FILE_WHOLE_READ);
    assert_int_equal(error, 0);
    assert_int_equal(length, 5);
    assert_memory_equal(text, "ab\0de", 5);
    assert_int_equal(text[5], '\0');
    free(text);
    rewind(f);
    assert_int_equal(File_read_whole(f, 4, &text, &length, &error), FILE_WHOLE_TOO_LARGE);
    assert_null(text);
    assert_int_equal(length, 0);
    fclose(f);
    f = holding("", 0);
    assert_int_equal(File_read_whole(f, 4, &text, &length, &error), FILE_WHOLE_READ);
    assert_int_equal(length, 0);
    assert_int_equal(text[0], '\0');
    free(text);
    fclose(f);
    f = fopen("/dev/null", "w");
    assert_non_null(f);
    assert_int_equal(File_read_whole(f, 4, &text, &length, &error), FILE_WHOLE_READ_FAILED);
    assert_int_equal(error, EBADF); /* the read's own errno, kept */
    assert_null(text);
    fclose(f);
}

/* A regular file whose read fails names its reason: /proc/self/mem reads at address 0, which
   no process maps, and the kernel answers EIO. */
static void test_read_regular_says_why(void **state)
{
    (void)state;
    char *text, err[256];
    size_t length;
    assert_int_equal(File_read_regular("/proc/self/mem", 16, &text, &length, err, sizeof err),
                     FILE_WHOLE_READ_FAILED);
    assert_null(text);
    assert_string_equal(err, "'/proc/self/mem': Input/output error");
}

/* A limit no allocation can hold: out of memory, nothing read. */
static void test_read_whole_no_memory(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip(); /* AddressSanitizer aborts on an allocation above its maximum instead of failing */
#endif
    char *text;
    size_t length;
    int error;
    FILE *f = holding("abc", 3);
    assert_int_equal(File_read_whole(f, SIZE_MAX - 1, &text, &length, &error),
                     FILE_WHOLE_NO_MEMORY);
    assert_null(text);
    assert_int_equal(ftell(f), 0);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines),
        cmocka_unit_test(test_bound),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_only_regular_files),
        cmocka_unit_test(test_read_whole),
        cmocka_unit_test(test_read_whole_no_memory),
        cmocka_unit_test(test_read_regular_says_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
