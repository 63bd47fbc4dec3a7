// Command interop holds rebuild-audit's transparency log to Go's own
// implementation of it, golang.org/x/mod/sumdb/note and
// golang.org/x/mod/sumdb/tlog (tests/interop/run.sh drives it):
//
//	interop check DIR VKEY    the tool's checkpoints (note.Open), inclusion
//	                          proofs (tlog.CheckRecord) and consistency
//	                          proofs (tlog.CheckTree) in DIR, and the roots
//	                          of Go's own tree of the records
//	interop prove DIR         Go's tlog.ProveRecord and tlog.ProveTree of
//	                          the same pairs, for the tool to check
//	interop sign CK KEY OUT   CK's text signed by note.Sign with the
//	                          secret key of the minisign file KEY
//	interop evidence FILE VKEY  an evidence file's checkpoint and proof
//
// DIR holds ck/N (the checkpoint of the first N records), leaf/I (record
// I's bytes), inc/N.I.json and con/M.N.json (the tool's proofs).
package main

import (
	"bufio"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type inclusion struct {
	Index    int64    `json:"index"`
	TreeSize int64    `json:"tree_size"`
	Leaf     []byte   `json:"leaf"`
	Proof    []string `json:"proof"`
}

type consistency struct {
	OldSize int64    `json:"old_size"`
	NewSize int64    `json:"new_size"`
	Proof   []string `json:"proof"`
}

type checkpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "interop: "+format+"\n", args...)
	os.Exit(1)
}

func hashes(list []string) []tlog.Hash {
	out := make([]tlog.Hash, len(list))
	for i, s := range list {
		h, err := tlog.ParseHash(s)
		if err != nil {
			fail("proof hash %q: %v", s, err)
		}
		out[i] = h
	}
	return out
}

func b64(list []tlog.Hash) []string {
	out := make([]string, len(list))
	for i, h := range list {
		out[i] = h.String()
	}
	return out
}

// parseCheckpoint reads a C2SP checkpoint text: origin, size, root.
func parseCheckpoint(text string) checkpoint {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) < 4 {
		fail("checkpoint of %d lines", len(lines))
	}
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || n < 0 || lines[1] != strconv.FormatInt(n, 10) {
		fail("checkpoint size %q", lines[1])
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		fail("checkpoint root %q: %v", lines[2], err)
	}
	return checkpoint{lines[0], n, root}
}

func openCheckpoint(msg []byte, v note.Verifier) checkpoint {
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		fail("note.Open: %v", err)
	}
	ck := parseCheckpoint(n.Text)
	if ck.Origin != v.Name() {
		fail("origin %q is not the key's name %q", ck.Origin, v.Name())
	}
	return ck
}

func readVerifier(path string) note.Verifier {
	b, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	v, err := note.NewVerifier(strings.TrimSpace(string(b)))
	if err != nil {
		fail("note.NewVerifier: %v", err)
	}
	return v
}

// memHashes is a tlog.HashReader over hashes kept in memory.
type memHashes []tlog.Hash

func (m memHashes) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		if x >= int64(len(m)) {
			return nil, errors.New("no such hash")
		}
		out[i] = m[x]
	}
	return out, nil
}

// goTree builds Go's own stored hashes of the records leaf/1..n.
func goTree(dir string) (memHashes, [][]byte) {
	var m memHashes
	var leaves [][]byte
	for i := 1; ; i++ {
		b, err := os.ReadFile(filepath.Join(dir, "leaf", strconv.Itoa(i)))
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			fail("%v", err)
		}
		hs, err := tlog.StoredHashes(int64(i-1), b, m)
		if err != nil {
			fail("StoredHashes: %v", err)
		}
		m = append(m, hs...)
		leaves = append(leaves, b)
	}
	return m, leaves
}

func checkpoints(dir string, v note.Verifier) map[int64]checkpoint {
	out := map[int64]checkpoint{}
	names, _ := filepath.Glob(filepath.Join(dir, "ck", "*"))
	for _, p := range names {
		b, err := os.ReadFile(p)
		if err != nil {
			fail("%v", err)
		}
		ck := openCheckpoint(b, v)
		want, _ := strconv.ParseInt(filepath.Base(p), 10, 64)
		if ck.Size != want {
			fail("%s signs %d records", p, ck.Size)
		}
		out[ck.Size] = ck
	}
	return out
}

func pair(name string) (int64, int64) {
	f := strings.Split(strings.TrimSuffix(name, ".json"), ".")
	a, _ := strconv.ParseInt(f[0], 10, 64)
	b, _ := strconv.ParseInt(f[1], 10, 64)
	return a, b
}

func readJSON(path string, v interface{}) {
	b, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		fail("%s: %v", path, err)
	}
}

func writeJSON(path string, v interface{}) {
	b, err := json.Marshal(v)
	if err != nil {
		fail("%v", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		fail("%v", err)
	}
}

func check(dir, vkey string) {
	v := readVerifier(vkey)
	cks := checkpoints(dir, v)
	m, leaves := goTree(dir)
	for size, ck := range cks {
		root, err := tlog.TreeHash(size, m)
		if err != nil || root != ck.Root {
			fail("the checkpoint of %d records has root %v, Go's tree %v", size, ck.Root, root)
		}
	}
	incs, _ := filepath.Glob(filepath.Join(dir, "inc", "*.json"))
	for _, p := range incs {
		n, id := pair(filepath.Base(p))
		var in inclusion
		readJSON(p, &in)
		ck, ok := cks[n]
		if !ok || in.TreeSize != n || in.Index != id-1 {
			fail("%s: index %d in %d", p, in.Index, in.TreeSize)
		}
		if string(in.Leaf) != string(leaves[id-1]) {
			fail("%s: the leaf is not record %d", p, id)
		}
		proof := hashes(in.Proof)
		if err := tlog.CheckRecord(proof, n, ck.Root, id-1, tlog.RecordHash(in.Leaf)); err != nil {
			fail("%s: tlog.CheckRecord: %v", p, err)
		}
		if len(proof) > 0 {
			proof[0][0] ^= 1
			if tlog.CheckRecord(proof, n, ck.Root, id-1, tlog.RecordHash(in.Leaf)) == nil {
				fail("%s: a changed proof still checks", p)
			}
		}
	}
	cons, _ := filepath.Glob(filepath.Join(dir, "con", "*.json"))
	for _, p := range cons {
		o, n := pair(filepath.Base(p))
		var c consistency
		readJSON(p, &c)
		if c.OldSize != o || c.NewSize != n {
			fail("%s: from %d to %d", p, c.OldSize, c.NewSize)
		}
		if err := tlog.CheckTree(hashes(c.Proof), n, cks[n].Root, o, cks[o].Root); err != nil {
			fail("%s: tlog.CheckTree: %v", p, err)
		}
	}
	fmt.Printf("go: %d checkpoints opened, %d inclusion and %d consistency proofs checked\n",
		len(cks), len(incs), len(cons))
}

// prove writes Go's proofs of the pairs the tool proved, into goinc/ and
// gocon/.
func prove(dir string) {
	m, leaves := goTree(dir)
	for _, sub := range []string{"goinc", "gocon"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			fail("%v", err)
		}
	}
	incs, _ := filepath.Glob(filepath.Join(dir, "inc", "*.json"))
	for _, p := range incs {
		n, id := pair(filepath.Base(p))
		proof, err := tlog.ProveRecord(n, id-1, m)
		if err != nil {
			fail("ProveRecord: %v", err)
		}
		writeJSON(filepath.Join(dir, "goinc", filepath.Base(p)),
			inclusion{id - 1, n, leaves[id-1], b64(proof)})
	}
	cons, _ := filepath.Glob(filepath.Join(dir, "con", "*.json"))
	for _, p := range cons {
		o, n := pair(filepath.Base(p))
		proof, err := tlog.ProveTree(n, o, m)
		if err != nil {
			fail("ProveTree: %v", err)
		}
		writeJSON(filepath.Join(dir, "gocon", filepath.Base(p)),
			consistency{o, n, b64(proof)})
	}
	fmt.Printf("go: %d inclusion and %d consistency proofs made\n", len(incs), len(cons))
}

// minisignSeed reads the Ed25519 seed of an unencrypted minisign secret
// key file: base64 of "Ed", kdf, "B2", salt[32], ops[8], mem[8], key
// id[8], secret key[64] (seed, public key), checksum[32].
func minisignSeed(path string) ed25519.PrivateKey {
	f, err := os.Open(path)
	if err != nil {
		fail("%v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	sc.Scan()
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(sc.Text()))
	if err != nil || len(raw) != 158 || string(raw[0:2]) != "Ed" || raw[2] != 0 || raw[3] != 0 {
		fail("%s is not an unencrypted minisign secret key", path)
	}
	return ed25519.NewKeyFromSeed(raw[62 : 62+32])
}

type edSigner struct {
	name string
	key  ed25519.PrivateKey
}

func (s edSigner) Name() string { return s.name }
func (s edSigner) KeyHash() uint32 {
	vkey, err := note.NewEd25519VerifierKey(s.name, s.key.Public().(ed25519.PublicKey))
	if err != nil {
		fail("%v", err)
	}
	f := strings.Split(vkey, "+")
	h, _ := strconv.ParseUint(f[1], 16, 32)
	return uint32(h)
}
func (s edSigner) Sign(msg []byte) ([]byte, error) { return ed25519.Sign(s.key, msg), nil }

func sign(ckPath, keyPath, out string) {
	b, err := os.ReadFile(ckPath)
	if err != nil {
		fail("%v", err)
	}
	text := string(b[:strings.Index(string(b), "\n\n")+1])
	ck := parseCheckpoint(text)
	msg, err := note.Sign(&note.Note{Text: text}, edSigner{ck.Origin, minisignSeed(keyPath)})
	if err != nil {
		fail("note.Sign: %v", err)
	}
	if err := os.WriteFile(out, msg, 0o644); err != nil {
		fail("%v", err)
	}
	var h [4]byte
	binary.BigEndian.PutUint32(h[:], edSigner{ck.Origin, minisignSeed(keyPath)}.KeyHash())
	fmt.Printf("go: signed %s as %s+%x\n", out, ck.Origin, h)
}

func evidence(path, vkey string) {
	var st struct {
		Predicate struct {
			Audit struct {
				ID int64 `json:"id"`
			} `json:"audit"`
			Record string `json:"record"`
			Log    struct {
				Checkpoint string   `json:"checkpoint"`
				Index      int64    `json:"index"`
				TreeSize   int64    `json:"tree_size"`
				Proof      []string `json:"proof"`
			} `json:"log"`
		} `json:"predicate"`
	}
	readJSON(path, &st)
	p := st.Predicate
	ck := openCheckpoint([]byte(p.Log.Checkpoint), readVerifier(vkey))
	if p.Log.Index != p.Audit.ID-1 || p.Log.TreeSize != ck.Size {
		fail("evidence: leaf %d of %d", p.Log.Index, p.Log.TreeSize)
	}
	if err := tlog.CheckRecord(hashes(p.Log.Proof), ck.Size, ck.Root, p.Log.Index,
		tlog.RecordHash([]byte(p.Record))); err != nil {
		fail("evidence: tlog.CheckRecord: %v", err)
	}
	fmt.Printf("go: evidence of audit %d is in the tree of %d records\n", p.Audit.ID, ck.Size)
}

func main() {
	if len(os.Args) < 3 {
		fail("usage: interop check|prove|sign|evidence ...")
	}
	switch os.Args[1] {
	case "check":
		check(os.Args[2], os.Args[3])
	case "prove":
		prove(os.Args[2])
	case "sign":
		sign(os.Args[2], os.Args[3], os.Args[4])
	case "evidence":
		evidence(os.Args[2], os.Args[3])
	default:
		fail("unknown mode %q", os.Args[1])
	}
}
