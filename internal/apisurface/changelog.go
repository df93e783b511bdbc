package apisurface

import (
	"path"
	"regexp"
	"strings"
)

// Unreleased returns the Unreleased section of a CHANGELOG.md: from its
// "## Unreleased" heading to the next "## " heading ("" without one).
func Unreleased(changelog string) string {
	_, rest, ok := strings.Cut(changelog, "\n## Unreleased")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// entry is one bullet (or paragraph) of a changelog section, with the
// "### " heading it sits under.
type entry struct {
	heading, text string
}

// entries splits a changelog section into its bullets: a line starting
// with "- " opens one, an indented or plain line continues it.
func entries(section string) []entry {
	var out []entry
	heading := ""
	open := false
	for l := range strings.Lines(section) {
		switch t := strings.TrimSpace(l); {
		case strings.HasPrefix(l, "### "):
			heading, open = l, false
		case t == "":
			open = false
		case strings.HasPrefix(l, "- ") || !open:
			out, open = append(out, entry{heading: heading, text: l}), true
		default:
			out[len(out)-1].text += l
		}
	}
	return out
}

// codeSpan matches a Markdown code span.
var codeSpan = regexp.MustCompile("`[^`]+`")

// Named reports whether a changelog section names an identifier: some
// entry whose heading or text names the identifier's package (its last
// path element, as a word) holds a code span with the identifier's name
// (its last element for a method or field) as a word: `backup.Restore`,
// `Restore`, `Client.Restore`, `Config` (`Namespace`, ...).
func Named(section string, id Ident) bool {
	name := id.Name[strings.LastIndex(id.Name, ".")+1:]
	pkgWord := regexp.MustCompile(`\b` + regexp.QuoteMeta(path.Base(id.Pkg)) + `\b`)
	nameWord := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
	for _, e := range entries(section) {
		if !pkgWord.MatchString(e.heading) && !pkgWord.MatchString(e.text) {
			continue
		}
		for _, span := range codeSpan.FindAllString(e.text, -1) {
			if nameWord.MatchString(span) {
				return true
			}
		}
	}
	return false
}
