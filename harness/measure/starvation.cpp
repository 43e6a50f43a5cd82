#include "measure/starvation.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

namespace opbench {

namespace {

// "<on-cpu ns> <run-queue wait ns> <timeslices>" of one thread; false when
// the thread is gone or the file is not there.
bool read_thread(const char *tid, RunQueueReading::Thread &out) {
    char path[300]; // a d_name is up to 255 bytes (GCC's -Wformat-truncation counts them)
    std::snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", tid);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[128];
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    unsigned long long on_cpu = 0, wait = 0, slices = 0;
    if (std::sscanf(buf, "%llu %llu %llu", &on_cpu, &wait, &slices) != 3) return false;
    out.wait_s = double(wait) * 1e-9;
    out.ran = slices;
    return true;
}

} // namespace

RunQueueReading read_run_queue() {
    RunQueueReading r;
    if (DIR *d = opendir("/proc/self/task")) {
        while (const dirent *e = readdir(d)) {
            if (e->d_name[0] == '.') continue;
            RunQueueReading::Thread t;
            if (read_thread(e->d_name, t)) r.threads[std::strtol(e->d_name, nullptr, 10)] = t;
        }
        closedir(d);
    }
    r.readable = !r.threads.empty();
    if (rusage u{}; getrusage(RUSAGE_SELF, &u) == 0) r.involuntary_switches = u.ru_nivcsw;
    return r;
}

RunQueueFigures run_queue_between(const RunQueueReading &before, const RunQueueReading &after) {
    RunQueueFigures f;
    if (before.involuntary_switches >= 0 && after.involuntary_switches >= 0)
        f.involuntary_switches = after.involuntary_switches - before.involuntary_switches;
    if (!before.readable || !after.readable) return f;
    f.wait_s = 0;
    for (const auto &[tid, now] : after.threads) {
        // A thread started during the repetition (an OpenMP team's first
        // parallel region) counts from zero.
        const auto was = before.threads.find(tid);
        const RunQueueReading::Thread then = was == before.threads.end() ? RunQueueReading::Thread{} : was->second;
        if (now.ran <= then.ran) continue; // did not run: not part of the work
        f.wait_s += std::max(0.0, now.wait_s - then.wait_s);
        f.waits += std::int64_t(now.ran - then.ran);
        ++f.threads;
    }
    return f;
}

StarvationVerdict judge_starvation(const RunQueueFigures &figures, std::span<const double> sample_seconds,
                                   double wall_seconds) {
    StarvationVerdict v;
    if (!std::isfinite(figures.wait_s) || sample_seconds.empty()) return v;
    std::vector<double> sorted(sample_seconds.begin(), sample_seconds.end());
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    double total = 0, excess = 0;
    for (double s : sorted) {
        total += s;
        excess += std::max(0.0, s - median);
    }
    if (!(total > 0)) return v;
    const double in_samples = std::isfinite(wall_seconds) && wall_seconds > total ? total / wall_seconds : 1.0;
    const double least_delay = figures.wait_s * in_samples / double(std::max(1, figures.threads));
    v.share = std::max(0.0, least_delay - excess) / total;
    const double mean_wait = figures.waits > 0 ? figures.wait_s / double(figures.waits) : 0.0;
    v.starved = v.share > kStarvedShare && mean_wait >= kSchedulerWaitSeconds;
    return v;
}

} // namespace opbench
