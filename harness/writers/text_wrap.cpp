#include "writers/text_wrap.hpp"

namespace opbench {

std::size_t display_width(std::string_view s) {
    std::size_t w = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++w;
    return w;
}

std::string wrap_words(std::string_view text, std::size_t indent, std::size_t first_indent, std::size_t width) {
    std::string out, line(first_indent, ' ');
    std::size_t line_width = first_indent;
    bool has_words = false; // the line holds a word beyond its indent
    std::size_t begin = 0;
    while (begin < text.size()) {
        std::size_t end = text.find(' ', begin);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view word = text.substr(begin, end - begin);
        begin = end + 1;
        if (word.empty()) continue; // runs of spaces
        const std::size_t w = display_width(word);
        if (has_words && line_width + 1 + w > width) {
            out += line + "\n";
            line.assign(indent, ' ');
            line_width = indent;
            has_words = false;
        }
        if (has_words) {
            line += ' ';
            ++line_width;
        }
        line += word;
        line_width += w;
        has_words = true;
    }
    if (has_words) out += line + "\n";
    return out;
}

std::string wrap_name(std::string_view name, std::size_t indent, std::size_t width) {
    std::string out, line(indent, ' ');
    std::size_t line_width = indent;
    bool has_parts = false;
    std::size_t begin = 0;
    while (begin < name.size()) {
        std::size_t end = name.find('/', begin);
        end = end == std::string_view::npos ? name.size() : end + 1; // the '/' stays on its line
        const std::string_view part = name.substr(begin, end - begin);
        begin = end;
        const std::size_t w = display_width(part);
        if (has_parts && line_width + w > width) {
            out += line + "\n";
            line.assign(indent + 2, ' ');
            line_width = indent + 2;
        }
        line += part;
        line_width += w;
        has_parts = true;
    }
    return out + line + "\n";
}

namespace {

// The byte offset where `s`'s first `columns` columns end.
std::size_t bytes_of_columns(std::string_view s, std::size_t columns) {
    std::size_t i = 0, w = 0;
    while (i < s.size()) {
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && w++ == columns) break;
        ++i;
    }
    return i;
}

} // namespace

std::string shorten_middle(std::string_view name, std::size_t width) {
    const std::size_t w = display_width(name);
    if (w <= width || width < 5) return std::string(name);
    const std::size_t head = (width - 1) / 4, tail = width - 1 - head;
    const std::size_t tail_begin = bytes_of_columns(name, w - tail);
    return std::string(name.substr(0, bytes_of_columns(name, head))) + "\u2026" + std::string(name.substr(tail_begin));
}

} // namespace opbench
