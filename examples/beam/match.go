package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/crashsig/crashsig/pipeline"
)

// isLocal reports whether name is a path of the local filesystem (no
// scheme, or file://), which the library reads in place.
func isLocal(name string) bool {
	if !strings.Contains(name, "://") {
		return true
	}
	u, err := url.Parse(name)
	return err == nil && u.Scheme == "file"
}

// localPath strips a file:// scheme.
func localPath(name string) string {
	if u, err := url.Parse(name); err == nil && u.Scheme == "file" {
		return u.Path
	}
	return name
}

// hasMeta reports whether a glob has wildcard characters.
func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// matchFn expands one glob into the files it names, on any registered
// Beam filesystem. The files chosen are those `crashsig classify` reads
// for the same input:
//
//   - a local directory (no wildcard) or DIR/** is walked like
//     pipeline.Files walks a directory: recursively, hidden entries and
//     files that are not crash text by their extension skipped
//     (pipeline.IsLogName); DIR/**/PATTERN keeps the files whose base
//     name matches PATTERN;
//   - another wildcard matches files (never directories) and applies the
//     same hidden and extension filter;
//   - a literal file is read whatever its name;
//   - on gs://, s3:// and other object stores the filesystem's own List
//     expands the glob (gs:// understands **), then the same filter
//     applies to each object's base name.
type matchFn struct{}

// ProcessElement emits every file glob names.
func (matchFn) ProcessElement(ctx context.Context, glob string, emit func(string)) error {
	files, skips, err := expand(ctx, glob)
	if err != nil {
		return err
	}
	for _, e := range skips {
		// As the CLI: a walk passes over what it cannot read as a file.
		beam.NewCounter("crashsig", "skipped_inputs").Inc(ctx, 1)
		log.Warnf(ctx, "%v", e)
	}
	if len(files) == 0 {
		// Not an error (Beam allows an empty wildcard match), but a typo
		// in a glob must not pass in silence.
		beam.NewCounter("crashsig", "empty_globs").Inc(ctx, 1)
		log.Warnf(ctx, "--input %q matches no file", glob)
	}
	for _, f := range files {
		emit(f)
	}
	return nil
}

// expand returns the files glob names, sorted, and the entries a
// directory walk skipped (pipeline.ErrSkipped: dangling links, named
// pipes, …), which the CLI reports and passes over.
func expand(ctx context.Context, glob string) (out []string, skips []error, err error) {
	// walk adds the files of pipeline.Files(root) that keep accepts.
	walk := func(root string, keep func(string) bool) error {
		for f, err := range pipeline.Files(ctx, root) {
			if errors.Is(err, pipeline.ErrSkipped) {
				skips = append(skips, err)
				continue
			}
			if err != nil {
				return err
			}
			if keep(f) {
				out = append(out, f)
			}
		}
		return nil
	}
	if isLocal(glob) {
		g := localPath(glob)
		if !hasMeta(g) {
			// A file or a directory: exactly what the CLI reads.
			if err := walk(g, func(string) bool { return true }); err != nil {
				return nil, nil, err
			}
			return out, skips, nil
		}
		if i := strings.Index(g, "**"); i >= 0 {
			root, rest := strings.TrimSuffix(g[:i], "/"), strings.TrimPrefix(g[i+2:], "/")
			if root == "" {
				root = "."
			}
			if strings.Contains(rest, "/") || strings.Contains(rest, "**") {
				return nil, nil, fmt.Errorf("glob %q: after ** only a base-name pattern is supported", glob)
			}
			roots := []string{root}
			if hasMeta(root) {
				var err error
				if roots, err = filepath.Glob(root); err != nil {
					return nil, nil, fmt.Errorf("glob %q: %w", glob, err)
				}
			}
			for _, r := range roots {
				if st, err := os.Stat(r); err != nil || !st.IsDir() {
					continue
				}
				if err := walk(r, func(f string) bool {
					ok, _ := filepath.Match(orStar(rest), filepath.Base(f))
					return ok
				}); err != nil {
					return nil, nil, err
				}
			}
		} else {
			ms, err := filepath.Glob(g)
			if err != nil {
				return nil, nil, fmt.Errorf("glob %q: %w", glob, err)
			}
			for _, m := range ms {
				if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() && wanted(m) {
					out = append(out, m)
				}
			}
		}
	} else {
		fsys, err := filesystem.New(ctx, glob)
		if err != nil {
			return nil, nil, err
		}
		defer fsys.Close()
		ms, err := fsys.List(ctx, glob)
		if err != nil {
			return nil, nil, fmt.Errorf("listing %q: %w", glob, err)
		}
		for _, m := range ms {
			if strings.HasSuffix(m, "/") || hasMeta(glob) && !wanted(m) {
				continue
			}
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), skips, nil
}

func orStar(p string) string {
	if p == "" {
		return "*"
	}
	return p
}

// wanted applies pipeline.Files' filter to a file a wildcard matched.
func wanted(name string) bool {
	base := path.Base(filepath.ToSlash(name))
	return !strings.HasPrefix(base, ".") && pipeline.IsLogName(base)
}
