package docsync

import (
	"encoding/json"
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A citation is a repository file that some text names: a relative
// Markdown link, a path whose first element is a top-level folder or file
// of the repository (the docs folder's pages, the suite files under
// experiments/suites, testdata under a package), or a bare Markdown file
// name. Run directories and example names in commands (a run's folder
// under runs, a YAML file of settings, a policy snapshot to write) are
// not citations: their first element is no top-level entry, and they are
// not Markdown files. A path inside a run's folder is written after the
// run (<run>/report/summary.json), since the report package is a
// top-level folder too.
//
// In Go files, comments are read, and string literals that are prose (a
// help text: it holds a space); a string that is one token is a name the
// code builds a path with, not a citation.

// citation is one file a text names, and where.
type citation struct {
	from string // the citing file, slash-separated, relative to the root
	line int
	text string // as written
	kind string // "link", "path" or "name"
}

func (c citation) String() string {
	return fmt.Sprintf("%s:%d: %s %q", c.from, c.line, c.kind, c.text)
}

var (
	// mdLink matches an inline Markdown link or image: [text](target).
	mdLink = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	// pathToken matches a run of path characters with at least one slash,
	// not preceded by one (so a URL's path is not read as a file's).
	pathToken = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.\-/<>*…:])((?:\./)?[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-<>*…]+)+/?)`)
	// mdName matches a bare Markdown file name.
	mdName = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.\-/])([A-Za-z0-9_\-][A-Za-z0-9_.\-]*\.md)\b`)
)

// generatedNames are Markdown files the code writes rather than the
// repository holds: rspo experiment --quick writes its page under this name.
var generatedNames = []string{"experiments_quick.md"}

// includedIntoDocs are Markdown files that rspo experiment copies into
// docs/experiments.md: their relative links resolve from docs/.
var includedIntoDocs = []string{"experiments/suites/intro.md", "experiments/suites/discussion.md"}

// repoFiles lists the root's top-level entries (the folders and files a
// path's first element must name to be a citation), every file's base
// name, and the texts to scan: Go files, Markdown files and the
// experiment suites. Hidden folders but .ci, testdata folders and the
// git-ignored run directory are skipped.
type repoFiles struct {
	top   map[string]bool
	names map[string]bool
	goSrc []string
	md    []string
	suite []string
}

func listRepo(root string) (*repoFiles, error) {
	r := &repoFiles{top: map[string]bool{}, names: map[string]bool{}}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !skipDir(e.Name(), true) {
			r.top[e.Name()] = true
		}
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p != root && skipDir(d.Name(), filepath.Dir(p) == root) {
				return filepath.SkipDir
			}
			return nil
		}
		r.names[d.Name()] = true
		if strings.Contains("/"+rel, "/testdata/") {
			return nil
		}
		switch {
		case strings.HasSuffix(rel, ".go"):
			r.goSrc = append(r.goSrc, rel)
		case strings.HasSuffix(rel, ".md"):
			r.md = append(r.md, rel)
		case strings.HasPrefix(rel, "experiments/suites/") && strings.HasSuffix(rel, ".json"):
			r.suite = append(r.suite, rel)
		}
		return nil
	})
	return r, err
}

// skipDir reports whether a folder holds no files of the repository:
// hidden folders (but .ci, where CI's script lives) and, at the top, the
// git-ignored run directory.
func skipDir(name string, top bool) bool {
	if name == ".git" || (strings.HasPrefix(name, ".") && name != ".ci") || strings.HasPrefix(name, "_") {
		return true
	}
	return top && name == "runs"
}

// texts returns the parts of a file that may cite files, with their
// lines: a Go file's comments and string literals, a Markdown file whole,
// a suite's string values. prose reports whether a text is prose (a
// comment, a Markdown file, a string with a space in it) rather than a
// name the code builds a path with.
type text struct {
	s     string
	line  int
	prose bool
	data  bool // a suite's value: every path in it is read
}

func goTexts(src []byte) []text {
	var out []text
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, scanner.ScanComments)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		line := fset.Position(pos).Line
		switch tok {
		case token.COMMENT:
			out = append(out, text{s: lit, line: line, prose: true})
		case token.STRING:
			if v, err := strconv.Unquote(lit); err == nil {
				out = append(out, text{s: v, line: line, prose: strings.ContainsAny(v, " \n")})
			}
		}
	}
}

func jsonTexts(src []byte) ([]text, error) {
	var v any
	if err := json.Unmarshal(src, &v); err != nil {
		return nil, err
	}
	var out []text
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, text{s: v, line: 1, prose: strings.Contains(v, " "), data: true})
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return out, nil
}

// citations returns every citation in the text t of file from.
func (r *repoFiles) citations(from string, t text, markdown bool) []citation {
	var out []citation
	lines := strings.Split(t.s, "\n")
	for i, l := range lines {
		at := citation{from: from, line: t.line + i}
		if markdown {
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				c := at
				c.text, c.kind = m[1], "link"
				out = append(out, c)
			}
		}
		for _, m := range pathToken.FindAllStringSubmatch(l, -1) {
			if !t.prose && !t.data {
				break
			}
			p := strings.TrimRight(m[1], ".,:;")
			first, _, _ := strings.Cut(strings.TrimPrefix(p, "./"), "/")
			if r.top[first] {
				c := at
				c.text, c.kind = p, "path"
				out = append(out, c)
			}
		}
		if t.prose {
			for _, m := range mdName.FindAllStringSubmatch(l, -1) {
				c := at
				c.text, c.kind = m[1], "name"
				out = append(out, c)
			}
		}
	}
	return out
}

// exists reports whether the citation names a file or folder of the
// repository rooted at root.
func (r *repoFiles) exists(root string, c citation) bool {
	dir := path.Dir(c.from)
	if slices.Contains(includedIntoDocs, c.from) {
		dir = "docs"
	}
	switch c.kind {
	case "link":
		target := c.text
		if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
			return true
		}
		target, _, _ = strings.Cut(target, "#")
		target, _, _ = strings.Cut(target, "?")
		return present(root, path.Join(dir, target))
	case "name":
		return r.names[c.text] || slices.Contains(generatedNames, c.text)
	default:
		p := strings.TrimPrefix(c.text, "./")
		// A placeholder (runs_<suite>.json, docs/…) ends what can be
		// checked: the folders before it must exist.
		elems := strings.Split(strings.TrimSuffix(p, "/"), "/")
		for i, e := range elems {
			if strings.ContainsAny(e, "<>…") || e == "..." || e == "…" {
				elems = elems[:i]
				break
			}
		}
		p = strings.Join(elems, "/")
		return present(root, p) || present(root, path.Join(dir, p)) || present(root, goSymbol(p))
	}
}

// goSymbol strips a Go identifier written after a package path
// (learner/learnersvc.Config → learner/learnersvc).
func goSymbol(p string) string {
	i := strings.LastIndex(p, "/")
	last := p[i+1:]
	if j := strings.Index(last, "."); j > 0 && j+1 < len(last) && last[j+1] >= 'A' && last[j+1] <= 'Z' {
		return p[:i+1] + last[:j]
	}
	return p
}

// present reports whether rel (slash-separated, relative to root; a glob
// is allowed) names something that exists inside root.
func present(root, rel string) bool {
	if rel == "" || rel == "." || strings.HasPrefix(rel, "../") || rel == ".." {
		return false
	}
	full := filepath.Join(root, filepath.FromSlash(rel))
	if strings.ContainsAny(rel, "*?[") {
		m, err := filepath.Glob(full)
		return err == nil && len(m) > 0
	}
	_, err := os.Stat(full)
	return err == nil
}

// missingCitations scans the repository at root and returns every
// citation of a file that does not exist.
func missingCitations(root string) ([]citation, error) {
	r, err := listRepo(root)
	if err != nil {
		return nil, err
	}
	var missing []citation
	seen := map[string]bool{} // a link's target is a path or a name too: one report a line
	check := func(from string, texts []text, markdown bool) {
		for _, t := range texts {
			for _, c := range r.citations(from, t, markdown) {
				key := fmt.Sprintf("%s:%d:%s", c.from, c.line, c.text)
				if !seen[key] && !r.exists(root, c) {
					seen[key] = true
					missing = append(missing, c)
				}
			}
		}
	}
	read := func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))) }
	for _, f := range r.goSrc {
		b, err := read(f)
		if err != nil {
			return nil, err
		}
		check(f, goTexts(b), false)
	}
	for _, f := range r.md {
		b, err := read(f)
		if err != nil {
			return nil, err
		}
		check(f, []text{{s: string(b), line: 1, prose: true}}, true)
	}
	for _, f := range r.suite {
		b, err := read(f)
		if err != nil {
			return nil, err
		}
		texts, err := jsonTexts(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		check(f, texts, false)
	}
	return missing, nil
}

// TestCitedFilesExist fails on every file that code comments, string
// literals (help texts among them), Markdown pages or experiment suites
// cite and the repository does not hold.
func TestCitedFilesExist(t *testing.T) {
	missing, err := missingCitations(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range missing {
		t.Errorf("%s: no such file in the repository", c)
	}
}

// TestCitationCheck runs the check on a small repository with known
// citations (testdata/citations): it names exactly the missing files that
// testdata/citations.want lists, and passes over run directories, example
// file names, URLs and names the code builds.
func TestCitationCheck(t *testing.T) {
	missing, err := missingCitations(filepath.Join("testdata", "citations"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range missing {
		got = append(got, fmt.Sprintf("%s:%d %s %s", c.from, c.line, c.kind, c.text))
	}
	slices.Sort(got)
	b, err := os.ReadFile(filepath.Join("testdata", "citations.want"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(b)), "\n")
	if !slices.Equal(got, want) {
		t.Errorf("missing citations:\n got %q\nwant %q", got, want)
	}
}
