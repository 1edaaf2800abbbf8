package bundle

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kruise-addon/kruise-addon/installer/bundle/bundletest"
)

// tarEntry is one entry of a bundle as a test rewrites it. sparse makes it a PAX sparse file of
// that many bytes whose archive holds none of them, as the attack on the bundle did.
type tarEntry struct {
	name   string
	data   []byte
	sparse int64
}

// readEntries reads every entry of the bundle at p, in order.
func readEntries(t *testing.T, p string) []tarEntry {
	t.Helper()
	es, err := bundletest.ReadEntries(p)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]tarEntry, len(es))
	for i, e := range es {
		out[i] = tarEntry{name: e.Name, data: e.Data}
	}
	return out
}

// writeEntries writes entries as a bundle file and returns its path. Go's tar writer drops the
// GNU.sparse records, so a sparse entry is written with look-alike keys of the same length that
// are then renamed in the archive's bytes; PAX records sit in the data of their own entry, which
// no header checksum covers.
func writeEntries(t *testing.T, entries []tarEntry) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(e.data)), ModTime: epoch, Format: tar.FormatPAX}
		data := e.data
		if e.sparse > 0 {
			// A sparse map with no data fragments: the whole file is a hole.
			data = make([]byte, 512)
			copy(data, "0\n")
			h.Name, h.Size = "GNUSparseFile.0/"+e.name, int64(len(data))
			h.PAXRecords = map[string]string{
				"XNU.sparse.major": "1", "XNU.sparse.minor": "0",
				"XNU.sparse.name": e.name, "XNU.sparse.realsize": strconv.FormatInt(e.sparse, 10),
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "edited.bundle.tar")
	if err := os.WriteFile(p, bytes.ReplaceAll(buf.Bytes(), []byte("XNU.sparse."), []byte("GNU.sparse.")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The sparse entries really are what the attack sent: tiny archives of huge files.
func TestSparseEntriesAreHugeFilesInTinyArchives(t *testing.T) {
	p := writeEntries(t, []tarEntry{{name: "chart/x.tgz", sparse: 1 << 30}})
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := tar.NewReader(f).Next()
	if err != nil {
		t.Fatal(err)
	}
	if h.Name != "chart/x.tgz" || h.Size != 1<<30 || fi.Size() > 8<<10 {
		t.Fatalf("entry %q of %d bytes in an archive of %d bytes, want chart/x.tgz of 1 GiB in a few KiB", h.Name, h.Size, fi.Size())
	}
}

// A bundle holds bundle.json first, its chart and an OCI layout, each entry bounded by its kind
// before any of it is read: the manifest and the chart by fixed sizes, the image blobs by what
// the manifest declares the images weigh (itself capped). Anything else is refused by name, and
// a blob must have the content its name is the digest of. Read (render, install) and Open
// (push) both refuse, and the error names the entry or the blob.
func TestBundleEntriesAreBoundedAndKnown(t *testing.T) {
	c := kruiseChart(t)
	src, m := writeBundle(t, c, testLayout(t, c))
	orig := readEntries(t, src)
	index := func(name string) int {
		for i, e := range orig {
			if e.name == name {
				return i
			}
		}
		t.Fatalf("no entry %s in the bundle", name)
		return -1
	}
	firstBlob := ""
	for _, e := range orig {
		if strings.HasPrefix(e.name, "images/blobs/sha256/") {
			firstBlob = e.name
			break
		}
	}
	edit := func(f func(es []tarEntry) []tarEntry) string {
		es := append([]tarEntry(nil), orig...)
		return writeEntries(t, f(es))
	}
	withManifest := func(f func(*Manifest)) []byte {
		mm := m
		mm.Images = append([]Image(nil), m.Images...)
		f(&mm)
		b, err := json.Marshal(mm)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const hugeSparse = 1 << 30
	cases := map[string]struct {
		bundle string
		// readToo says that Read, which skips the images' content, refuses it as well as Open.
		readToo bool
		wantErr []string
	}{
		"an unknown entry at the top is refused by name": {
			bundle:  edit(func(es []tarEntry) []tarEntry { return append(es, tarEntry{name: "notes.txt", data: []byte("hi")}) }),
			readToo: true, wantErr: []string{`unknown entry "notes.txt"`},
		},
		"a second chart is refused by name": {
			bundle: edit(func(es []tarEntry) []tarEntry {
				return append(es, tarEntry{name: "chart/other-1.0.0.tgz", data: []byte("x")})
			}),
			readToo: true, wantErr: []string{`unknown entry "chart/other-1.0.0.tgz"`},
		},
		"a file in the layout that is no blob is refused by name": {
			bundle: edit(func(es []tarEntry) []tarEntry {
				return append(es, tarEntry{name: "images/blobs/sha256/not-a-digest", data: []byte("x")})
			}),
			readToo: true, wantErr: []string{`unknown entry "images/blobs/sha256/not-a-digest"`},
		},
		"a sparse 1 GiB entry of an unknown name is refused by name": {
			bundle:  edit(func(es []tarEntry) []tarEntry { return append(es, tarEntry{name: "chart/big", sparse: hugeSparse}) }),
			readToo: true, wantErr: []string{`unknown entry "chart/big"`},
		},
		"a sparse 1 GiB chart is refused by its size, before it is read": {
			bundle: edit(func(es []tarEntry) []tarEntry {
				es[index(m.Chart.File)] = tarEntry{name: m.Chart.File, sparse: hugeSparse}
				return es
			}),
			readToo: true, wantErr: []string{fmt.Sprintf("entry %q is 1073741824 bytes", m.Chart.File), "at most 16777216"},
		},
		"a sparse 1 GiB bundle.json is refused by its size": {
			bundle:  edit(func(es []tarEntry) []tarEntry { es[0] = tarEntry{name: manifestFile, sparse: hugeSparse}; return es }),
			readToo: true, wantErr: []string{`entry "bundle.json" is 1073741824 bytes`, "at most 1048576"},
		},
		"a sparse 1 GiB blob is refused: the images declare far less": {
			bundle: edit(func(es []tarEntry) []tarEntry {
				return append(es, tarEntry{name: "images/blobs/sha256/" + strings.Repeat("0", 64), sparse: hugeSparse})
			}),
			readToo: true, wantErr: []string{`entry "images/blobs/sha256/` + strings.Repeat("0", 64) + `" is 1073741824 bytes`, "the images' declared sizes in bundle.json allow"},
		},
		"images declared above the cap are refused": {
			bundle: edit(func(es []tarEntry) []tarEntry {
				es[0].data = withManifest(func(mm *Manifest) { mm.Images[0].Size = MaxImageBytes })
				return es
			}),
			readToo: true, wantErr: []string{"bundle.json", fmt.Sprintf("%d bytes a bundle's images may weigh at most", MaxImageBytes)},
		},
		"a blob whose content is not its digest is refused by name": {
			bundle: edit(func(es []tarEntry) []tarEntry {
				i := index(firstBlob)
				es[i].data = bytes.Repeat([]byte{'x'}, len(es[i].data))
				return es
			}),
			readToo: true, wantErr: []string{"blob sha256:" + strings.TrimPrefix(firstBlob, "images/blobs/sha256/"), "digest"},
		},
		"bundle.json after the chart is refused": {
			bundle: edit(func(es []tarEntry) []tarEntry {
				es[0], es[1] = es[1], es[0]
				return es
			}),
			readToo: true, wantErr: []string{fmt.Sprintf("first entry is %q", m.Chart.File)},
		},
		"an entry twice is refused by name": {
			bundle:  edit(func(es []tarEntry) []tarEntry { return append(es, es[index(firstBlob)]) }),
			readToo: true, wantErr: []string{fmt.Sprintf("entry %q appears twice", firstBlob)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opens := map[string]func(string) (*Bundle, error){"Open": Open}
			if tc.readToo {
				opens["Read"] = Read
			}
			for fn, open := range opens {
				b, err := open(tc.bundle)
				if err == nil {
					b.Close()
					t.Errorf("%s accepted the bundle", fn)
					continue
				}
				for _, part := range tc.wantErr {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("%s: error %q lacks %q", fn, err, part)
					}
				}
			}
		})
	}

	t.Run("the bundle as created is read and opened", func(t *testing.T) {
		for fn, open := range map[string]func(string) (*Bundle, error){"Open": Open, "Read": Read} {
			b, err := open(writeEntries(t, orig))
			if err != nil {
				t.Fatalf("%s: %v", fn, err)
			}
			b.Close()
		}
	})
}
