# Shared by scripts/build-images.sh and scripts/build-molecule-image.sh (sourced; needs `die`).
# shellcheck shell=bash

# The main Debian archive URI from this machine's apt configuration
# (deb822 *.sources first, then one-line *.list), never the security archive.
debian_mirror() {
    if [ -n "${MINIK8S_DEBIAN_MIRROR:-}" ]; then
        echo "$MINIK8S_DEBIAN_MIRROR"
        return
    fi
    local f uri=""
    shopt -s nullglob
    for f in /etc/apt/sources.list.d/*.sources; do
        # Paragraph mode: one deb822 stanza per record; comment lines ignored.
        uri="$(awk 'BEGIN { RS = ""; FS = "\n" }
            {
                types = ""; uris = ""; suites = ""; enabled = "yes"
                for (i = 1; i <= NF; i++) {
                    line = $i
                    if (line ~ /^[ \t]*#/) continue
                    if (match(line, /^[A-Za-z-]+:/)) {
                        key = tolower(substr(line, 1, RLENGTH - 1))
                        val = substr(line, RLENGTH + 1)
                        gsub(/^[ \t]+|[ \t]+$/, "", val)
                        if (key == "types") types = val
                        else if (key == "uris") uris = val
                        else if (key == "suites") suites = val
                        else if (key == "enabled") enabled = tolower(val)
                    }
                }
                if (enabled == "no" || (" " types " ") !~ / deb /) next
                if (suites ~ /-security/ && suites !~ /(^| )[a-z]+( |$)/) next
                n = split(uris, u, /[ \t]+/)
                for (j = 1; j <= n; j++) {
                    if (u[j] ~ /security/) continue
                    if (u[j] !~ /^(https?|ftp|file):/) continue
                    print u[j]; exit
                }
            }' "$f")"
        [ -n "$uri" ] && break
    done
    if [ -z "$uri" ]; then
        for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
            [ -r "$f" ] || continue
            uri="$(awk '
                /^[ \t]*deb[ \t]/ {
                    i = 2
                    if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                    u = $i; s = $(i + 1)
                    if (u ~ /security/ || s ~ /-security$/) next
                    if (u !~ /^(https?|ftp|file):/) next
                    print u; exit
                }' "$f")"
            [ -n "$uri" ] && break
        done
    fi
    shopt -u nullglob
    [ -n "$uri" ] || die "no Debian archive found in /etc/apt/sources.list{,.d/*}; set MINIK8S_DEBIAN_MIRROR"
    echo "${uri%/}"
}
