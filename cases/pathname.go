package cases

import "strings"

// PathName is a case or variant name as a directory name that every CI
// artifact store and file system holds: characters other than letters,
// digits, '.', '_' and '-' (':' and ',' in policies such as
// threshold:700,10,1000, '+' in freeze+manual:50) become '-'. The manifest
// keeps the real names; cases refuse two variants whose path names collide.
func PathName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '-'
	}, name)
}
