//! How to talk to one toolkit over AT-SPI: which calls it answers right decides the fastest
//! safe way to read its objects (`Properties.GetAll`, the cache, how text is read).

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum TextMode {
    /// `GetText(0, -1)`: all of it in one call (GTK 3; GTK 4.8 answers "" to it).
    ToEnd,
    /// `GetText(0, 4096)`: the toolkit clamps the end (GTK 4, Qt; GTK 3 would read past the end).
    Clamped,
    /// Ask `CharacterCount` first, then read at most [`super::MAX_TEXT_CHARS`].
    CountFirst,
    /// Only the length, as bullets.
    Masked,
}

/// How to talk to one toolkit: what it gets wrong decides the fastest safe calls.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Flavor {
    /// `Properties.GetAll` works (GTK). Qt 5.15 crashes on it, so only where known to work.
    pub(crate) getall: bool,
    pub(crate) text: TextMode,
    /// `Cache.GetItems` gives live data for the whole application (GTK 3 and 4).
    pub(crate) cache: bool,
    /// The cache's parent links and indices agree with `GetChildren` wherever a parent's
    /// list is complete, so such a list replaces the `GetChildren` call. GTK 3; GTK 4 too: there
    /// a stack page's content names the stack as its parent, skipping the page, which leaves a
    /// stack of two or more pages short of its live child count (incomplete: asked); a stack of
    /// one page then lists its content without the page between, a container with nothing of
    /// its own to show.
    pub(crate) cache_tree: bool,
    /// An object path is never given to another object (GTK: a counter in GTK 3, a UUID in
    /// GTK 4; Qt's paths are addresses, reused), so what comes with an object's class, its
    /// action names, is read once.
    pub(crate) stable_paths: bool,
    /// The cache appears only once an event listener is registered (at-spi2-atk: GTK 3).
    pub(crate) cache_needs_listener: bool,
    /// "showing" means on screen (GTK 3, Gecko; GTK 4.8 never sets it below the window).
    pub(crate) showing: bool,
    /// A label's accessible name is its text (GTK 3 and 4: checked on every label of both
    /// widget factories and the test app), so a named label's text is not read again.
    pub(crate) label_name_is_text: bool,
}

impl Flavor {
    /// Whether an object's text is its name, so that reading the text again is not needed: a
    /// named label of a toolkit whose label names are their text.
    pub(crate) fn text_is_name(&self, role: &str, name: &str) -> bool {
        self.label_name_is_text && role == "label" && !name.is_empty()
    }

    pub(crate) fn of(toolkit: &str, version: &str) -> Flavor {
        let major = version
            .split('.')
            .next()
            .and_then(|m| m.parse::<u32>().ok())
            .unwrap_or(0);
        let plain = Flavor {
            getall: false,
            text: TextMode::CountFirst,
            cache: false,
            cache_tree: false,
            cache_needs_listener: false,
            showing: false,
            stable_paths: false,
            label_name_is_text: false,
        };
        if toolkit.eq_ignore_ascii_case("gtk") && major >= 4 {
            Flavor {
                getall: true,
                text: TextMode::Clamped,
                cache: true,
                cache_tree: true,
                stable_paths: true,
                label_name_is_text: true,
                ..plain
            }
        } else if toolkit.eq_ignore_ascii_case("gtk") {
            Flavor {
                getall: true,
                text: TextMode::ToEnd,
                cache: true,
                cache_tree: true,
                cache_needs_listener: true,
                showing: true,
                stable_paths: true,
                label_name_is_text: true,
            }
        } else if toolkit.eq_ignore_ascii_case("gecko") {
            // Firefox: "showing" is unset on what is not drawn (its hidden menu bar, the items
            // of a closed <select>), and its placeholder extents are (-1,-1,-1,-1).
            Flavor {
                showing: true,
                ..plain
            }
        } else if toolkit.eq_ignore_ascii_case("qt") {
            Flavor {
                text: TextMode::Clamped,
                ..plain
            }
        } else {
            plain
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_gtk_labels_with_a_name_skip_their_text() {
        for (toolkit, version) in [("GTK", "3.24.38"), ("GTK", "4.8.3")] {
            let f = Flavor::of(toolkit, version);
            assert!(f.text_is_name("label", "Pressed: 1"), "{toolkit} {version}");
            assert!(!f.text_is_name("label", ""), "an unnamed label's text is read");
            assert!(
                !f.text_is_name("text", "Name entry"),
                "an entry's text is its value"
            );
        }
        for (toolkit, version) in [("Qt", "5.15.8"), ("Gecko", "115.0"), ("", "")] {
            let f = Flavor::of(toolkit, version);
            assert!(!f.text_is_name("label", "Result"), "{toolkit}: the text is read");
        }
    }
}
