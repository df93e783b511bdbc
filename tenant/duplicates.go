package tenant

import (
	"strconv"

	yaml3 "sigs.k8s.io/yaml/goyaml.v3"
)

// duplicateKeys returns the paths of the keys a YAML (or JSON) document
// sets twice in one mapping, merge keys ("<<") aside: Helm reads such a
// document keeping the last value, and so does tenantkit, but the earlier
// value is lost, which ParseSpec and ParseKubernetes report as a warning
// (K-duplicate-key). A document the YAML library cannot read has none.
func duplicateKeys(data []byte, prefix string) []string {
	var root yaml3.Node
	if err := yaml3.Unmarshal(data, &root); err != nil {
		return nil
	}
	var out []string
	var walk func(n *yaml3.Node, path string, depth int)
	walk = func(n *yaml3.Node, path string, depth int) {
		if n == nil || depth > 64 {
			return
		}
		switch n.Kind {
		case yaml3.DocumentNode:
			for _, c := range n.Content {
				walk(c, path, depth+1)
			}
		case yaml3.SequenceNode:
			for i, c := range n.Content {
				walk(c, path+"["+strconv.Itoa(i)+"]", depth+1)
			}
		case yaml3.MappingNode:
			seen := map[string]bool{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				p := k
				if path != "" {
					p = path + "." + k
				}
				if k != "<<" || n.Content[i].Tag != "!!merge" {
					if seen[k] {
						out = append(out, p)
					}
					seen[k] = true
				}
				walk(n.Content[i+1], p, depth+1)
			}
		}
	}
	walk(&root, prefix, 0)
	return out
}
