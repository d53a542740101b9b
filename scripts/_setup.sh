# Sourced by the other scripts: installs what they need on a fresh Debian/Ubuntu
# machine (system packages through apt, Python packages into ./.venv) and puts
# the virtual environment first on PATH.  Usage: setup_env <pip extras> [apt packages...]
setup_env() {
  local extras="$1"; shift
  local missing=()
  for pkg in "$@"; do
    case "$pkg" in
      graphviz) command -v dot >/dev/null 2>&1 || missing+=(graphviz fonts-dejavu-core) ;;
      chromium) [ -x /usr/bin/chromium ] || missing+=(chromium fonts-dejavu-core) ;;
      npm) command -v npm >/dev/null 2>&1 || missing+=(npm) ;;  # also part of NodeSource's nodejs
      *) dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg") ;;
    esac
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing system packages: ${missing[*]}"
    _apt_update
    _apt_get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  if [ ! -x .venv/bin/python ]; then
    if ! python3 -m venv .venv 2>/dev/null; then
      # Debian's python3 ships venv separately.
      rm -rf .venv
      _apt_update
      _apt_get install -y -qq python3-venv >/dev/null
      python3 -m venv .venv
    fi
  fi
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e ".[${extras}]"
  export PATH="$PWD/.venv/bin:$PATH"
  # Browsers and Jupyter write their settings under HOME: keep them out of the user's.
  export AUTODIFF_VIZ_SCRATCH="${AUTODIFF_VIZ_SCRATCH:-$PWD/.venv/scratch}"
  mkdir -p "$AUTODIFF_VIZ_SCRATCH"
}

# apt-get as root, waiting up to 10 minutes for dpkg's lock when another apt or dpkg runs (on a fresh
# machine, unattended upgrades often do) instead of failing at once.
_apt_get() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 "$@"
}

# `apt-get update`: its lock on the package lists ignores DPkg::Lock::Timeout (apt 2.6), so wait here, as long.
_apt_update() {
  local err
  for _ in $(seq 120); do
    err=$(_apt_get update -qq 2>&1 >/dev/null) && return 0
    case "$err" in
      *"Could not get lock"*|*"Unable to lock"*) sleep 5 ;;
      *) echo "$err" >&2; return 1 ;;
    esac
  done
  echo "$err" >&2
  return 1
}
