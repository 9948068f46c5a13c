#include "trainer/bench/peer_venv.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "trainer/bench/subprocess.h"

namespace gpt_sft::bench {
namespace {

namespace fs = std::filesystem;

std::ostream& Progress(const PeerVenvOptions& o) { return o.progress != nullptr ? *o.progress : std::cerr; }

std::vector<std::string> WithPython(const std::vector<std::string>& argv, const std::string& python) {
  std::vector<std::string> out;
  for (const std::string& a : argv) out.push_back(absl::StrReplaceAll(a, {{"{python}", python}}));
  return out;
}

std::vector<std::string> InstallCommand(const PeerVenvOptions& o) {
  if (!o.install_command.empty()) return o.install_command;
  return {"{python}",
          "-m",
          "pip",
          "install",
          "--progress-bar",
          "on",
          absl::StrCat("torch==", o.torch_version),
          absl::StrCat("numpy==", kPinnedNumpyVersion)};
}

std::vector<std::string> CheckCommand(const PeerVenvOptions& o) {
  if (!o.check_command.empty()) return o.check_command;
  return {"{python}", "-c", "import torch; print(torch.__version__)"};
}

// What one step printed, and how it ended.
struct StepOutput {
  ExitStatus exit;
  std::string stdout_text, stderr_text;
};

// Runs argv with both of its streams copied to the progress stream as they come (pip's
// download bars are the progress line) and kept for the error message.
absl::StatusOr<StepOutput> RunStreaming(const std::vector<std::string>& argv, std::ostream& progress) {
  absl::StatusOr<SpawnedChild> child = SpawnWithPipes(argv, CurrentEnvironment());
  if (!child.ok()) return child.status();
  StepOutput out;
  pollfd fds[2] = {{child->stdout_fd, POLLIN, 0}, {child->stderr_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out.stdout_text, &out.stderr_text};
  int open_count = 2;
  char buf[16384];
  while (open_count > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
        progress.write(buf, n);
        progress.flush();
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  close(child->stdout_fd);
  close(child->stderr_fd);
  absl::StatusOr<ExitStatus> exit = WaitForExit(child->pid, argv[0]);
  if (!exit.ok()) return exit.status();
  out.exit = *exit;
  return out;
}

// Runs one creation step; an error names the command, how it ended and where its output is.
absl::StatusOr<StepOutput> RunStep(const std::string& what, const std::vector<std::string>& argv,
                                   const std::string& log_path, std::ostream& progress) {
  absl::StatusOr<StepOutput> out = RunStreaming(argv, progress);
  if (!out.ok()) {
    return absl::Status(out.status().code(),
                        absl::StrCat("the PyTorch peer's venv: ", what, " could not start: ", out.status().message()));
  }
  if (out->exit.exit_code == 0) return out;
  std::ofstream(log_path) << "$ " << absl::StrJoin(argv, " ") << "\n" << out->stdout_text << out->stderr_text;
  const std::string how = out->exit.term_signal != 0 ? absl::StrCat("was killed by signal ", out->exit.term_signal)
                                                     : absl::StrCat("exited with status ", out->exit.exit_code);
  return absl::UnavailableError(absl::StrCat("the PyTorch peer's venv: ", what, " failed: `", absl::StrJoin(argv, " "),
                                             "` ", how, "; its output is in ", log_path, ". Tail:\n",
                                             Tail(out->stdout_text + out->stderr_text, 1500)));
}

bool ProcessAlive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

// Removes "<final>.partial-<pid>" directories whose process is gone (an interrupted install).
void RemoveDeadPartials(const std::string& root, const std::string& final_name, std::ostream& progress) {
  std::error_code ec;
  const std::string prefix = final_name + ".partial-";
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    int pid = 0;
    if (!absl::StartsWith(name, prefix) || !absl::SimpleAtoi(name.substr(prefix.size()), &pid)) continue;
    if (pid > 0 && ProcessAlive(pid)) continue;
    progress << "torch peer: removing " << e.path().string() << " (an install that did not finish)\n";
    fs::remove_all(e.path(), ec);
  }
}

std::string PythonOf(const std::string& venv) { return venv + "/bin/python"; }

}  // namespace

std::string DefaultBasePython() {
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
      const std::string candidate = absl::StrCat(dir, "/python3");
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return "/usr/bin/python3";
}

std::string PeerVenvRoot(const PeerVenvOptions& options) {
  if (!options.root_dir.empty()) return options.root_dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return absl::StrCat(xdg, "/gpt-sft");
  }
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr && *home != '\0' ? home : "/tmp", "/.cache/gpt-sft");
}

std::string PeerVenvDir(const PeerVenvOptions& options) {
  return absl::StrCat(PeerVenvRoot(options), "/torch-peer-", options.torch_version);
}

absl::StatusOr<std::string> EnsurePeerVenv(const PeerVenvOptions& options) {
  const std::string root = PeerVenvRoot(options);
  const std::string final_dir = PeerVenvDir(options);
  const std::string marker = final_dir + "/" + kPeerVenvCompleteMarker;
  std::error_code ec;
  if (fs::exists(final_dir, ec)) {
    if (fs::exists(marker, ec)) return PythonOf(final_dir);
    return absl::FailedPreconditionError(
        absl::StrCat(final_dir, " exists but is not a complete peer venv (no ", kPeerVenvCompleteMarker,
                     "); remove it and the bench makes a new one: rm -rf ", final_dir));
  }
  std::ostream& progress = Progress(options);
  fs::create_directories(root, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat("cannot create ", root, ": ", ec.message()));
  const std::string final_name = fs::path(final_dir).filename().string();
  RemoveDeadPartials(root, final_name, progress);
  const std::string partial = absl::StrCat(final_dir, ".partial-", getpid());
  fs::remove_all(partial, ec);
  const std::string log_path = final_dir + ".install.log";
  progress << "torch peer: first use: creating a Python venv with torch " << options.torch_version << " from PyPI in "
           << final_dir << " (once; about 5 GB, since PyPI's Linux torch brings its CUDA libraries even for a CPU)\n";

  auto fail = [&](absl::Status s) {
    fs::remove_all(partial, ec);
    return s;
  };
  const std::string base_python = options.base_python.empty() ? DefaultBasePython() : options.base_python;
  progress << "torch peer: [1/3] " << base_python << " -m venv " << partial << "\n";
  absl::StatusOr<StepOutput> step =
      RunStep("creating the venv", {base_python, "-m", "venv", partial}, log_path, progress);
  if (!step.ok()) return fail(step.status());
  const std::vector<std::string> install = WithPython(InstallCommand(options), PythonOf(partial));
  progress << "torch peer: [2/3] " << absl::StrJoin(install, " ") << "\n";
  step = RunStep("installing torch", install, log_path, progress);
  if (!step.ok()) return fail(step.status());
  const std::vector<std::string> check = WithPython(CheckCommand(options), PythonOf(partial));
  progress << "torch peer: [3/3] checking that the venv imports torch " << options.torch_version << "\n";
  step = RunStep("checking the install", check, log_path, progress);
  if (!step.ok()) return fail(step.status());
  const std::string reported(absl::StripAsciiWhitespace(step->stdout_text));
  if (!absl::StartsWith(reported, options.torch_version)) {
    return fail(absl::InternalError(absl::StrCat("the PyTorch peer's venv: `", absl::StrJoin(check, " "),
                                                 "` reported torch '", reported, "', want ", options.torch_version)));
  }
  {
    std::ofstream out(partial + "/" + kPeerVenvCompleteMarker);
    out << options.torch_version << "\n";
    if (!out.flush()) return fail(absl::InternalError(absl::StrCat("cannot write the marker in ", partial)));
  }
  fs::rename(partial, final_dir, ec);
  if (ec) {
    // Another bench finished the same install first: use its venv.
    if (fs::exists(marker, ec)) {
      fs::remove_all(partial, ec);
      return PythonOf(final_dir);
    }
    return fail(absl::InternalError(absl::StrCat("cannot rename ", partial, " to ", final_dir, ": ", ec.message())));
  }
  fs::remove(log_path, ec);
  progress << "torch peer: ready: " << PythonOf(final_dir) << " (torch " << reported << ")\n";
  return PythonOf(final_dir);
}

}  // namespace gpt_sft::bench
