#include "tests/support/process.h"

#include <arpa/inet.h>
#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace tephra::testing {
namespace {

struct Pipe {
  int fds[2] = {-1, -1};
  bool Open() { return pipe2(fds, O_CLOEXEC) == 0; }
  void Close(int i) {
    if (fds[i] >= 0) close(fds[i]);
    fds[i] = -1;
  }
  ~Pipe() {
    Close(0);
    Close(1);
  }
};

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv, std::string_view input,
                         std::chrono::milliseconds timeout) {
  CommandResult result;
  if (argv.empty()) {
    result.err = "empty command";
    return result;
  }
  Pipe in, out, err;
  if (!in.Open() || !out.Open() || !err.Open()) {
    result.err = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fds[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fds[1], 2);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    result.err = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return result;
  }
  in.Close(0);
  out.Close(1);
  err.Close(1);

  size_t written = 0;
  if (input.empty()) in.Close(1);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::array<char, 65536> buf{};
  while (out.fds[0] >= 0 || err.fds[0] >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      result.timed_out = true;
      break;
    }
    std::array<pollfd, 3> fds{};
    nfds_t n = 0;
    int* owners[3];
    std::string* sinks[3] = {nullptr, nullptr, nullptr};
    if (out.fds[0] >= 0) {
      fds[n] = {out.fds[0], POLLIN, 0};
      owners[n] = &out.fds[0];
      sinks[n++] = &result.out;
    }
    if (err.fds[0] >= 0) {
      fds[n] = {err.fds[0], POLLIN, 0};
      owners[n] = &err.fds[0];
      sinks[n++] = &result.err;
    }
    if (in.fds[1] >= 0) {
      fds[n] = {in.fds[1], POLLOUT, 0};
      owners[n] = &in.fds[1];
      sinks[n++] = nullptr;
    }
    int ready = poll(fds.data(), n, static_cast<int>(std::min<long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (sinks[i] == nullptr) {  // stdin
        ssize_t w = write(*owners[i], input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 || written == input.size()) {
          close(*owners[i]);
          *owners[i] = -1;
        }
        continue;
      }
      ssize_t r = read(*owners[i], buf.data(), buf.size());
      if (r > 0) {
        sinks[i]->append(buf.data(), static_cast<size_t>(r));
      } else {
        close(*owners[i]);
        *owners[i] = -1;
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!result.timed_out && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv,
                                     const std::string& output_file) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output_file.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ) == 0) pid_ = pid;
  posix_spawn_file_actions_destroy(&actions);
}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

bool BackgroundProcess::Signal(int signal) {
  return pid_ > 0 && !reaped_ && kill(pid_, signal) == 0;
}

int BackgroundProcess::Wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    usleep(10000);
  }
}

uint16_t FreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

}  // namespace tephra::testing
