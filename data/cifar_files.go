package data

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// namedData is a file's content and the name used in messages.
type namedData struct {
	path string
	data []byte
}

// readCIFARFiles reads the named files of an archive folder dir, from a
// .tar.gz archive or from the extracted folder (dir itself or its parent).
// limits gives each file's largest allowed size; larger files are reported
// as oversize without being read whole.
func readCIFARFiles(p, dir string, limits map[string]int64) (map[string]namedData, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	if !st.IsDir() {
		return readTarGz(p, dir, limits)
	}
	base := p
	if _, err := os.Stat(filepath.Join(p, dir)); err == nil {
		base = filepath.Join(p, dir)
	}
	out := make(map[string]namedData, len(limits))
	for name, limit := range limits {
		fp := filepath.Join(base, name)
		data, err := readLimited(fp, limit)
		if err != nil {
			return nil, err
		}
		out[name] = namedData{fp, data}
	}
	return out, nil
}

// readLimited reads a file of at most limit bytes.
func readLimited(fp string, limit int64) ([]byte, error) {
	f, err := os.Open(fp)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	return readUpTo(f, fp, limit)
}

// readUpTo reads r whole, failing when it holds more than limit bytes.
func readUpTo(r io.Reader, name string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("data: %s: read error at offset %d: %w", name, len(data), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("data: %s: oversize: more than %d bytes (bytes past offset %d)", name, limit, limit)
	}
	return data, nil
}

// readTarGz reads the files dir/name of a gzipped (or plain) tar archive.
func readTarGz(archive, dir string, limits map[string]int64) (map[string]namedData, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	return readTar(f, archive, dir, limits)
}

// readTar reads the files dir/name of the tar stream r, gunzipping it when it
// starts with the gzip magic bytes. archive names r in messages.
func readTar(r io.Reader, archive, dir string, limits map[string]int64) (map[string]namedData, error) {
	zr, err := maybeGunzip(r, archive)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	out := make(map[string]namedData, len(limits))
	for len(out) < len(limits) {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("data: %s: tar archive: %w", archive, err)
		}
		clean := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		name, ok := strings.CutPrefix(clean, dir+"/")
		limit, wanted := limits[name]
		if !ok || !wanted {
			continue
		}
		member := archive + ":" + clean
		if hdr.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("data: %s: not a regular file", member)
		}
		if hdr.Size > limit {
			return nil, fmt.Errorf("data: %s: oversize: %d bytes, at most %d expected", member, hdr.Size, limit)
		}
		data, err := readUpTo(tr, member, limit)
		if err != nil {
			return nil, err
		}
		out[name] = namedData{member, data}
	}
	var missing []string
	for name := range limits {
		if _, ok := out[name]; !ok {
			missing = append(missing, dir+"/"+name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("data: %s: missing %s", archive, strings.Join(missing, ", "))
	}
	return out, nil
}
