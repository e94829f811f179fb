// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// Compiled in ThreadSanitizer builds only (transports/kafka/CMakeLists.txt hands the object to
// every executable that links babelqueue::kafka). Debian's librdkafka 2.0 runs its threads and
// locks on glibc's C11 <threads.h> (thrd_create, mtx_lock, cnd_wait, ...), which call glibc's
// pthread code internally, where the sanitizer runtimes of GCC 12 and clang 14 do not see them.
// A librdkafka thread then crashes in the first malloc TSan intercepts (its thread state was never
// set up), and the hand-overs through its locks would be invisible. As objects of the executable
// (which exports these symbols to librdkafka), these definitions take the place of glibc's and
// forward to the pthread calls TSan intercepts. glibc's C11 types wrap the pthread ones (mtx_t a
// pthread_mutex_t, cnd_t a pthread_cond_t, thrd_t a pthread_t), so the casts below are what glibc
// itself does. The races TSan would report inside librdkafka itself are suppressed (see
// __tsan_default_suppressions); ours around it are not.

#if !defined(__SANITIZE_THREAD__) && defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define __SANITIZE_THREAD__ 1  // clang's spelling of GCC's macro
#endif
#endif

#if defined(__SANITIZE_THREAD__)

#include <pthread.h>
#include <threads.h>

#include <cerrno>
#include <cstdint>
#include <new>

namespace {

struct Start {
  thrd_start_t func;
  void* arg;
};

void* run_thread(void* p) {
  const Start start = *static_cast<Start*>(p);
  delete static_cast<Start*>(p);
  return reinterpret_cast<void*>(static_cast<std::intptr_t>(start.func(start.arg)));
}

int result_of(int pthread_error) {
  if (pthread_error == 0) return thrd_success;
  if (pthread_error == ETIMEDOUT) return thrd_timedout;
  if (pthread_error == EBUSY) return thrd_busy;
  if (pthread_error == ENOMEM || pthread_error == EAGAIN) return thrd_nomem;
  return thrd_error;
}

pthread_mutex_t* native(mtx_t* mutex) {
  return reinterpret_cast<pthread_mutex_t*>(mutex);
}

pthread_cond_t* native(cnd_t* cond) {
  return reinterpret_cast<pthread_cond_t*>(cond);
}

}  // namespace

// Visible: the build hides symbols by default.
#pragma GCC visibility push(default)
extern "C" {

int thrd_create(thrd_t* thread, thrd_start_t func, void* arg) {
  auto* start = new (std::nothrow) Start{func, arg};
  if (start == nullptr) return thrd_nomem;
  pthread_t id{};
  const int error = pthread_create(&id, nullptr, run_thread, start);
  if (error != 0) {
    delete start;
    return result_of(error);
  }
  *thread = id;
  return thrd_success;
}

int thrd_join(thrd_t thread, int* result) {
  void* value = nullptr;
  const int error = pthread_join(thread, &value);
  if (error == 0 && result != nullptr)
    *result = static_cast<int>(reinterpret_cast<std::intptr_t>(value));
  return result_of(error);
}

int thrd_detach(thrd_t thread) {
  return result_of(pthread_detach(thread));
}

int mtx_init(mtx_t* mutex, int type) {
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  if ((type & mtx_recursive) != 0) pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_RECURSIVE);
  const int error = pthread_mutex_init(native(mutex), &attributes);
  pthread_mutexattr_destroy(&attributes);
  return result_of(error);
}

int mtx_lock(mtx_t* mutex) {
  return result_of(pthread_mutex_lock(native(mutex)));
}

int mtx_trylock(mtx_t* mutex) {
  return result_of(pthread_mutex_trylock(native(mutex)));
}

int mtx_timedlock(mtx_t* __restrict mutex, const struct timespec* __restrict deadline) {
  return result_of(pthread_mutex_timedlock(native(mutex), deadline));
}

int mtx_unlock(mtx_t* mutex) {
  return result_of(pthread_mutex_unlock(native(mutex)));
}

void mtx_destroy(mtx_t* mutex) {
  pthread_mutex_destroy(native(mutex));
}

int cnd_init(cnd_t* cond) {
  return result_of(pthread_cond_init(native(cond), nullptr));
}

int cnd_signal(cnd_t* cond) {
  return result_of(pthread_cond_signal(native(cond)));
}

int cnd_broadcast(cnd_t* cond) {
  return result_of(pthread_cond_broadcast(native(cond)));
}

int cnd_wait(cnd_t* cond, mtx_t* mutex) {
  return result_of(pthread_cond_wait(native(cond), native(mutex)));
}

int cnd_timedwait(cnd_t* __restrict cond, mtx_t* __restrict mutex,
                  const struct timespec* __restrict deadline) {
  return result_of(pthread_cond_timedwait(native(cond), native(mutex), deadline));
}

void cnd_destroy(cnd_t* cond) {
  pthread_cond_destroy(native(cond));
}

void call_once(once_flag* flag, void (*func)(void)) {
  pthread_once(reinterpret_cast<pthread_once_t*>(flag), func);
}

// librdkafka is not instrumented: its atomics (reference counts of the buffers a message points
// into, ...) order nothing TSan can see, so a buffer it frees after the test read a message
// looks like a race. The interceptors librdkafka itself calls (free, memcpy, ...) are not
// checked; instrumented code (the callbacks librdkafka runs included) still is. For the same
// reason a mutex librdkafka creates on one thread and hands to another through its own atomics
// looks like a race between its initialisation and its first lock: those reports go through the
// forwarders above, which nothing but librdkafka calls, and are suppressed by their names. The
// sanitizer asks for this hook at start-up.
const char* __tsan_default_suppressions() {
  return "called_from_lib:librdkafka.so.1\n"
         "race:mtx_init\n"
         "race:mtx_lock\n"
         "race:mtx_trylock\n"
         "race:mtx_timedlock\n"
         "race:mtx_unlock\n"
         "race:mtx_destroy\n"
         "race:cnd_init\n"
         "race:cnd_wait\n"
         "race:cnd_timedwait\n"
         "race:cnd_signal\n"
         "race:cnd_broadcast\n"
         "race:cnd_destroy\n";
}

}  // extern "C"
#pragma GCC visibility pop

#endif  // __SANITIZE_THREAD__
