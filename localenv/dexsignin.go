package localenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// ErrDexLoginRefused is dex showing its password form again: wrong
// email or password.
var ErrDexLoginRefused = errors.New("localenv: dex refused the login")

// SignIn is a headless browser for dex's own HTML pages: from rawURL (an
// authorization URL, or a device verification URL with or without
// user_code) it picks the password connector, submits the device code and
// the login form with email and password, and follows every redirect,
// including the last one to a loopback redirect URI, as a browser does.
// It returns when a page asks for nothing more; an error status on the way
// is an error.
func (d *Dex) SignIn(ctx context.Context, rawURL, email, password string) error {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return err
	}
	client := d.HTTPClient()
	client.Jar = jar
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return err
	}
	logins := 0
	for step := 0; step < 12; step++ {
		page, err := fetchPage(client, req)
		if err != nil {
			return err
		}
		f, next := page.form, page.link
		switch {
		case f != nil && f.has("password"):
			if logins++; logins > 1 {
				return fmt.Errorf("%w: %s", ErrDexLoginRefused, email)
			}
			f.values.Set("login", email)
			f.values.Set("password", password)
		case f != nil && f.has("user_code"):
		case next != "":
			req, err = http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
			if err != nil {
				return err
			}
			continue
		default:
			return nil
		}
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, f.action, strings.NewReader(f.values.Encode()))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return errors.New("localenv: dex sign-in did not finish in 12 pages")
}

// page is what SignIn reads of one HTML page.
type page struct {
	form *form
	// link is the password connector's link on dex's connector list.
	link string
}

type form struct {
	action string
	values url.Values
}

func (f *form) has(name string) bool { _, ok := f.values[name]; return ok }

// fetchPage sends req, following redirects, and parses the page it ends on.
func fetchPage(client *http.Client, req *http.Request) (*page, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("localenv: dex sign-in: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("localenv: dex sign-in: %s %s: %s", resp.Status, resp.Request.URL.Redacted(), snippet(body))
	}
	doc, err := html.Parse(strings.NewReader(string(body)))
	if err != nil {
		return nil, err
	}
	base := resp.Request.URL
	p := &page{}
	walk(doc, func(n *html.Node) {
		switch {
		case n.Data == "form" && p.form == nil:
			p.form = &form{action: resolve(base, attr(n, "action")), values: url.Values{}}
		case n.Data == "input" && p.form != nil && attr(n, "name") != "":
			p.form.values.Set(attr(n, "name"), attr(n, "value"))
		case n.Data == "a" && strings.Contains(attr(n, "href"), "/auth/local"):
			p.link = resolve(base, attr(n, "href"))
		}
	})
	return p, nil
}

func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func resolve(base *url.URL, ref string) string {
	u, err := base.Parse(ref)
	if err != nil {
		return ref
	}
	return u.String()
}

func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
