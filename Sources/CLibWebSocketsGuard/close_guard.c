#define _GNU_SOURCE
#include "pomodoro_close_guard.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#if __SIZEOF_POINTER__ == 8
#define GUARD_R_SYM(info) ELF64_R_SYM(info)
#else
#define GUARD_R_SYM(info) ELF32_R_SYM(info)
#endif

typedef int (*close_function)(int);

/* What libwebsockets' table held for close() before the guard: the C library's close, or a sanitizer's. */
static close_function next_close;
/* The slot in libwebsockets' table, to tell whether it still points at the guard. */
static close_function *library_slot;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;

enum { max_held = 16 };
struct held_number {
    int fd;
    dev_t device;
    ino_t inode;
};
static __thread int armed;
static __thread int held_count;
static __thread struct held_number held[max_held];

static int call_next_close(int fd) {
    close_function next = __atomic_load_n(&next_close, __ATOMIC_ACQUIRE);
    if (next) return next(fd);
    return close(fd);
}

static int is_eventfd(int fd) {
    char path[64], target[64];
    ssize_t length;
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    length = readlink(path, target, sizeof target - 1);
    if (length <= 0) return 0;
    target[length] = 0;
    return strcmp(target, "anon_inode:[eventfd]") == 0;
}

int pomodoro_close_guard_close(int fd) {
    if (armed && fd >= 0 && held_count < max_held && is_eventfd(fd)) {
        /* A socket of no use as the placeholder: it has an inode of its own (so it can be told from anything
           else later put on the number), and polling it would not fail. */
        int placeholder = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct stat identity;
        if (placeholder >= 0 && fstat(placeholder, &identity) == 0 && dup3(placeholder, fd, O_CLOEXEC) == fd) {
            call_next_close(placeholder);
            held[held_count].fd = fd;
            held[held_count].device = identity.st_dev;
            held[held_count].inode = identity.st_ino;
            held_count++;
            return 0;
        }
        if (placeholder >= 0) call_next_close(placeholder);
    }
    return call_next_close(fd);
}

void pomodoro_close_guard_arm(void) { armed = 1; }

void pomodoro_close_guard_disarm(void) { armed = 0; }

int pomodoro_close_guard_release(void) {
    int closed = 0;
    for (int i = 0; i < held_count; i++) {
        struct stat now;
        if (fstat(held[i].fd, &now) == 0 && now.st_dev == held[i].device && now.st_ino == held[i].inode) {
            call_next_close(held[i].fd);
            closed++;
        }
    }
    held_count = 0;
    return closed;
}

int pomodoro_close_guard_held(void) { return held_count; }

/* An address from the dynamic section: the dynamic linker has usually made it absolute already. */
static uintptr_t dynamic_address(uintptr_t base, uintptr_t value) { return value < base ? base + value : value; }

struct search {
    close_function *slot;
    uintptr_t relro_start, relro_end;
};

static void find_in_relocations(uintptr_t base, const ElfW(Rela) *table, size_t bytes, const ElfW(Sym) *symbols,
                                const char *names, struct search *found) {
    for (size_t i = 0; table && i < bytes / sizeof *table && !found->slot; i++) {
        size_t index = GUARD_R_SYM(table[i].r_info);
        if (index == 0) continue;
        if (strcmp(names + symbols[index].st_name, "close") == 0)
            found->slot = (close_function *)(base + table[i].r_offset);
    }
}

static int find_library_slot(struct dl_phdr_info *info, size_t size, void *data) {
    struct search *found = data;
    const ElfW(Dyn) *dynamic = NULL;
    const ElfW(Rela) *plt = NULL, *rela = NULL;
    const ElfW(Sym) *symbols = NULL;
    const char *names = NULL;
    size_t plt_bytes = 0, rela_bytes = 0;
    int plt_is_rela = 1;
    uintptr_t base = info->dlpi_addr;
    (void)size;

    if (!info->dlpi_name || !strstr(info->dlpi_name, "/libwebsockets.so")) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        if (header->p_type == PT_DYNAMIC) dynamic = (const ElfW(Dyn) *)(base + header->p_vaddr);
        if (header->p_type == PT_GNU_RELRO) {
            found->relro_start = base + header->p_vaddr;
            found->relro_end = found->relro_start + header->p_memsz;
        }
    }
    if (!dynamic) return 1;
    for (const ElfW(Dyn) *entry = dynamic; entry->d_tag != DT_NULL; entry++) {
        switch (entry->d_tag) {
        case DT_SYMTAB: symbols = (const ElfW(Sym) *)dynamic_address(base, entry->d_un.d_ptr); break;
        case DT_STRTAB: names = (const char *)dynamic_address(base, entry->d_un.d_ptr); break;
        case DT_JMPREL: plt = (const ElfW(Rela) *)dynamic_address(base, entry->d_un.d_ptr); break;
        case DT_PLTRELSZ: plt_bytes = entry->d_un.d_val; break;
        case DT_PLTREL: plt_is_rela = entry->d_un.d_val == DT_RELA; break;
        case DT_RELA: rela = (const ElfW(Rela) *)dynamic_address(base, entry->d_un.d_ptr); break;
        case DT_RELASZ: rela_bytes = entry->d_un.d_val; break;
        }
    }
    if (!symbols || !names) return 1;
    if (plt_is_rela) find_in_relocations(base, plt, plt_bytes, symbols, names, found);
    if (!found->slot) find_in_relocations(base, rela, rela_bytes, symbols, names, found);
    return 1;
}

static void install(void) {
    struct search found = {0};
    dl_iterate_phdr(find_library_slot, &found);
    if (!found.slot || !*found.slot) return;
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)found.slot & ~(uintptr_t)(page - 1);
    size_t length = (uintptr_t)(found.slot + 1) - start;
    if (mprotect((void *)start, length, PROT_READ | PROT_WRITE) != 0) return;
    __atomic_store_n(&next_close, *found.slot, __ATOMIC_RELEASE);
    __atomic_store_n(found.slot, (close_function)pomodoro_close_guard_close, __ATOMIC_RELEASE);
    /* The table is read-only once the dynamic linker is done with it (RELRO): it is made so again. */
    if ((uintptr_t)found.slot >= found.relro_start && (uintptr_t)found.slot < found.relro_end)
        mprotect((void *)start, length, PROT_READ);
    library_slot = found.slot;
}

int pomodoro_close_guard_install(void) {
    pthread_once(&install_once, install);
    return pomodoro_close_guard_installed();
}

int pomodoro_close_guard_installed(void) {
    return library_slot && __atomic_load_n(library_slot, __ATOMIC_ACQUIRE) == pomodoro_close_guard_close;
}
