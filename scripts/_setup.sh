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
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
    echo "Installing system packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  if [ ! -x .venv/bin/python ]; then
    if ! python3 -m venv .venv 2>/dev/null; then
      # Debian's python3 ships venv separately.
      rm -rf .venv
      local sudo=""
      [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
      $sudo apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
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
