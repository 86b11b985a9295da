//! Link footnotes numbered across the pieces a page is converted in: `html2text`'s plain text
//! (`[text][1]`, `**bold**`, `# Heading`, `* item`), except that the links are numbered by one
//! counter shared by all the pieces, and their footnotes (`[1]: url`, one to a line, never
//! wrapped) are written once, after the last piece.

use std::cell::RefCell;
use std::rc::Rc;

use html2text::render::TextDecorator;

/// `html2text`'s plain decorator with links numbered across pieces (see the module docs). Its
/// clones share the links.
#[derive(Clone, Default)]
pub(crate) struct Links {
    urls: Rc<RefCell<Vec<String>>>,
}

impl Links {
    /// How many links were met.
    pub(crate) fn len(&self) -> usize {
        self.urls.borrow().len()
    }

    /// Forgets the links met after the first `len`.
    pub(crate) fn truncate(&self, len: usize) {
        self.urls.borrow_mut().truncate(len);
    }

    /// The footnotes of the links met so far, one to a line (empty without links).
    pub(crate) fn footnotes(&self) -> String {
        let mut out = String::new();
        for (i, url) in self.urls.borrow().iter().enumerate() {
            out.push_str(&format!("[{}]: {url}\n", i + 1));
        }
        out
    }
}

impl TextDecorator for Links {
    type Annotation = ();

    fn decorate_link_start(&mut self, url: &str) -> (String, Self::Annotation) {
        self.urls.borrow_mut().push(url.to_owned());
        ("[".to_owned(), ())
    }

    fn decorate_link_end(&mut self) -> String {
        // Links do not nest, so the last one started is the one ending.
        format!("][{}]", self.urls.borrow().len())
    }

    fn decorate_em_start(&self) -> (String, Self::Annotation) {
        (String::new(), ())
    }

    fn decorate_em_end(&self) -> String {
        String::new()
    }

    fn decorate_strong_start(&self) -> (String, Self::Annotation) {
        (String::new(), ())
    }

    fn decorate_strong_end(&self) -> String {
        String::new()
    }

    fn decorate_strikeout_start(&self) -> (String, Self::Annotation) {
        (String::new(), ())
    }

    fn decorate_strikeout_end(&self) -> String {
        String::new()
    }

    fn decorate_code_start(&self) -> (String, Self::Annotation) {
        (String::new(), ())
    }

    fn decorate_code_end(&self) -> String {
        String::new()
    }

    fn decorate_preformat_first(&self) -> Self::Annotation {}

    fn decorate_preformat_cont(&self) -> Self::Annotation {}

    fn decorate_image(&mut self, _src: &str, title: &str) -> (String, Self::Annotation) {
        (format!("[{title}]"), ())
    }

    fn header_prefix(&self, level: usize) -> String {
        "#".repeat(level) + " "
    }

    fn quote_prefix(&self) -> String {
        "> ".to_owned()
    }

    fn unordered_item_prefix(&self) -> String {
        "* ".to_owned()
    }

    fn ordered_item_prefix(&self, i: i64) -> String {
        format!("{i}. ")
    }

    fn make_subblock_decorator(&self) -> Self {
        self.clone()
    }
}
