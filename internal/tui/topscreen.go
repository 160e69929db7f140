package tui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/uniseg"
)

// topKey returns the name of a key for top's view (see keyUp): a
// character is its own name; "" for a key the view does not know.
func topKey(ev *tcell.EventKey) string {
	switch ev.Key() {
	case tcell.KeyUp:
		return keyUp
	case tcell.KeyDown:
		return keyDown
	case tcell.KeyEnter, tcell.KeyLF:
		return keyEnter
	case tcell.KeyEsc:
		return keyEsc
	case tcell.KeyBackspace, tcell.KeyBackspace2:
		return keyBackspace
	case tcell.KeyCtrlC:
		return keyCtrlC
	case tcell.KeyRune:
		if ev.Modifiers()&tcell.ModAlt != 0 {
			return "" // ESC then a key, typed fast
		}
		return string(ev.Rune())
	}
	return ""
}

// drawTop puts lines, as render laid them out, on the screen and shows
// them: tcell writes the cells that changed.
func drawTop(s tcell.Screen, lines []topLine) {
	w, _ := s.Size()
	for y, l := range lines {
		x := 0
		for _, sp := range l.spans {
			s.PutStrStyled(x, y, sp.text, sp.style)
			x += uniseg.StringWidth(sp.text)
		}
		for ; x < w; x++ {
			s.SetContent(x, y, ' ', nil, l.fill)
		}
	}
	s.Show()
}
