module rebuild-audit.dev/interop

go 1.19

require golang.org/x/mod v0.0.0

// Offline: the x/mod sources Debian's golang-golang-x-mod-dev installs,
// and an empty stand-in for the x/tools its go.mod names (which none of
// the packages used here imports).
replace golang.org/x/mod => /usr/share/gocode/src/golang.org/x/mod

replace golang.org/x/tools => ./stub-tools
