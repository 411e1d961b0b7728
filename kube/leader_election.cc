#include "kube/leader_election.h"

#include <random>

#include <glog/logging.h>
#include <rapidjson/document.h>

namespace tephra::kube {

namespace {

// Lease calls must finish well inside the renew deadline, so they get their own client over
// the same connections: short timeouts, no retries (the election loop is the retry).
std::shared_ptr<Client> LeaseClient(const Client& shared, const LeaderElectionConfig& config) {
  ClientOptions options = shared.options();
  options.max_retries = 0;
  options.request_timeout = config.renew_deadline / 2;
  return std::make_shared<Client>(shared.transport(), options);
}

}  // namespace

LeaderElector::LeaderElector(std::shared_ptr<Client> client, LeaderElectionConfig config,
                             LeaderCallbacks callbacks, base::ClockInterface& clock)
    : client_(LeaseClient(*client, config)),
      config_(std::move(config)),
      callbacks_(std::move(callbacks)),
      clock_(clock) {}

Status LeaderElector::Validate(const LeaderElectionConfig& c) {
  if (c.name.empty() || c.namespace_.empty()) {
    return InvalidArgument("leader election: lease name and namespace are required");
  }
  if (c.identity.empty()) return InvalidArgument("leader election: identity is required");
  if (c.renew_deadline >= c.lease_duration) {
    return InvalidArgument("leader election: renew deadline must be shorter than lease duration");
  }
  if (c.retry_period.count() <= 0 || c.retry_period >= c.renew_deadline) {
    return InvalidArgument(
        "leader election: retry period must be positive and shorter than "
        "the renew deadline");
  }
  return Status::Ok();
}

bool LeaderElector::IsLeader() const {
  sync::MutexLock l(mu_);
  return leading_ && clock_.Monotonic() - last_renew_ < config_.renew_deadline;
}

std::string LeaderElector::CurrentLeader() const {
  sync::MutexLock l(mu_);
  return observed_holder_;
}

void LeaderElector::Stop() {
  {
    sync::MutexLock l(mu_);
    stopped_ = true;
  }
  cv_.NotifyAll();
}

bool LeaderElector::Wait(std::chrono::milliseconds d) {
  static thread_local std::mt19937 rng{std::random_device{}()};
  // client-go jitters the retry period by up to 20% so contenders do not move in lockstep.
  std::uniform_real_distribution<double> jitter(1.0, 1.2);
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(d * jitter(rng));
  sync::MutexLock lock(mu_);
  clock_.WaitUntil(mu_, cv_, clock_.Monotonic() + wait,
                   [this]() REQUIRES(mu_) { return stopped_; });
  return !stopped_;
}

std::string LeaderElector::LeaseJson(const Record& r, const std::string& resource_version) const {
  json::Writer w;
  w.StartObject()
      .Field("apiVersion", "coordination.k8s.io/v1")
      .Field("kind", "Lease")
      .Key("metadata")
      .StartObject()
      .Field("name", config_.name)
      .Field("namespace", config_.namespace_);
  if (!resource_version.empty()) w.Field("resourceVersion", resource_version);
  w.EndObject().Key("spec").StartObject().Field("holderIdentity", r.holder);
  w.Field("leaseDurationSeconds", r.lease_duration_seconds);
  if (!r.acquire_time.empty()) w.Field("acquireTime", r.acquire_time);
  if (!r.renew_time.empty()) w.Field("renewTime", r.renew_time);
  w.Field("leaseTransitions", r.transitions);
  w.EndObject().EndObject();
  return w.Take();
}

bool LeaderElector::TryAcquireOrRenew() {
  const std::string now = base::FormatMicroTime(clock_.Now());
  const auto mono = clock_.Monotonic();
  const int64_t duration_s = std::max<int64_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(config_.lease_duration).count());
  Record desired;
  desired.holder = config_.identity;
  desired.lease_duration_seconds = duration_s;
  desired.acquire_time = now;
  desired.renew_time = now;

  StatusOr<std::string> current =
      client_->Get(resources::kLeases, config_.namespace_, config_.name);
  if (!current.ok()) {
    if (current.status().code() != StatusCode::kNotFound) {
      LOG(WARNING) << "leader election: reading lease " << config_.namespace_ << "/" << config_.name
                   << ": " << current.status().ToString();
      return false;
    }
    StatusOr<std::string> created =
        client_->Create(resources::kLeases, config_.namespace_, LeaseJson(desired, ""));
    if (!created.ok()) {
      VLOG(1) << "leader election: creating lease: " << created.status().ToString();
      return false;
    }
    sync::MutexLock l(mu_);
    observed_ = desired;
    observed_holder_ = desired.holder;
    observed_renew_ = desired.renew_time;
    observed_time_ = mono;
    return true;
  }

  json::Document doc;
  if (!json::Parse(*current, &doc).ok()) return false;
  json::Errors errors;
  json::Reader r(&doc, &errors);
  Record old;
  old.holder = r["spec"]["holderIdentity"].String();
  old.lease_duration_seconds = r["spec"]["leaseDurationSeconds"].Int();
  old.acquire_time = r["spec"]["acquireTime"].String();
  old.renew_time = r["spec"]["renewTime"].String();
  old.transitions = r["spec"]["leaseTransitions"].Int();
  std::string resource_version = r["metadata"]["resourceVersion"].String();

  {
    sync::MutexLock l(mu_);
    // Time runs from when *we* saw the record change, never from the holder's timestamps.
    if (old.holder != observed_holder_ || old.renew_time != observed_renew_) {
      observed_holder_ = old.holder;
      observed_renew_ = old.renew_time;
      observed_time_ = mono;
    }
    observed_ = old;
    observed_resource_version_ = resource_version;
    bool held_by_other = !old.holder.empty() && old.holder != config_.identity;
    auto held_for = std::chrono::seconds(std::max<int64_t>(old.lease_duration_seconds, 1));
    if (held_by_other && observed_time_ + held_for > mono) return false;
  }

  if (old.holder == config_.identity) {
    desired.acquire_time = old.acquire_time;
    desired.transitions = old.transitions;
  } else {
    desired.transitions = old.transitions + 1;
  }
  StatusOr<std::string> updated = client_->Update(
      resources::kLeases, config_.namespace_, config_.name, LeaseJson(desired, resource_version));
  if (!updated.ok()) {
    VLOG(1) << "leader election: updating lease: " << updated.status().ToString();
    return false;
  }
  sync::MutexLock l(mu_);
  observed_ = desired;
  observed_holder_ = desired.holder;
  observed_renew_ = desired.renew_time;
  observed_time_ = mono;
  return true;
}

bool LeaderElector::Release() {
  Record r;
  std::string rv;
  {
    sync::MutexLock l(mu_);
    if (observed_.holder != config_.identity) return true;
    r = observed_;
    rv = observed_resource_version_;
  }
  // An empty holder with a 1 s duration lets the next candidate take over at once.
  r.holder = "";
  r.lease_duration_seconds = 1;
  r.renew_time = base::FormatMicroTime(clock_.Now());
  StatusOr<std::string> current =
      client_->Get(resources::kLeases, config_.namespace_, config_.name);
  if (!current.ok()) return false;
  json::Document doc;
  if (!json::Parse(*current, &doc).ok()) return false;
  json::Errors errors;
  json::Reader reader(&doc, &errors);
  if (reader["spec"]["holderIdentity"].String() != config_.identity) return true;
  rv = reader["metadata"]["resourceVersion"].String();
  return client_->Update(resources::kLeases, config_.namespace_, config_.name, LeaseJson(r, rv))
      .ok();
}

Status LeaderElector::Run() {
  TEPHRA_RETURN_IF_ERROR(Validate(config_));
  std::string last_reported;
  auto report_leader = [&] {
    std::string holder = CurrentLeader();
    if (holder != last_reported) {
      last_reported = holder;
      if (!holder.empty())
        LOG(INFO) << "leader election: " << config_.name << " is led by " << holder;
      if (callbacks_.on_new_leader) callbacks_.on_new_leader(holder);
    }
  };

  // Campaign.
  while (true) {
    {
      sync::MutexLock l(mu_);
      if (stopped_) return Status::Ok();
    }
    // A renewal counts from when it was sent, not from when its answer arrived: an answer
    // that arrives late (a frozen process, a slow network) must not extend our term.
    auto sent = clock_.Monotonic();
    bool acquired = TryAcquireOrRenew();
    report_leader();
    if (acquired) {
      sync::MutexLock l(mu_);
      leading_ = true;
      last_renew_ = sent;
      break;
    }
    if (!Wait(config_.retry_period)) return Status::Ok();
  }
  LOG(INFO) << "leader election: " << config_.identity << " acquired lease " << config_.namespace_
            << "/" << config_.name;
  if (callbacks_.on_started_leading) callbacks_.on_started_leading();

  // Lead: renew every retry period; give up when renew_deadline passes without success.
  Status result;
  while (true) {
    if (!Wait(config_.retry_period)) break;
    auto sent = clock_.Monotonic();
    if (TryAcquireOrRenew()) {
      sync::MutexLock l(mu_);
      last_renew_ = sent;
      if (clock_.Monotonic() - last_renew_ < config_.renew_deadline) continue;
    }
    sync::MutexLock l(mu_);
    if (clock_.Monotonic() - last_renew_ >= config_.renew_deadline) {
      result = FailedPrecondition("leader election: lost lease " + config_.namespace_ + "/" +
                                  config_.name + " (no renewal within the renew deadline)");
      break;
    }
  }
  {
    sync::MutexLock l(mu_);
    leading_ = false;
  }
  if (!result.ok()) LOG(ERROR) << result.message();
  // Stop acting before handing the lease back, so a successor never overlaps with us.
  if (callbacks_.on_stopped_leading) callbacks_.on_stopped_leading();
  if (result.ok() && config_.release_on_cancel && !Release()) {
    LOG(WARNING) << "leader election: could not release lease " << config_.name;
  }
  return result;
}

}  // namespace tephra::kube
