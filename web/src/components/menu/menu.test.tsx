import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { Menu, MenuAnchor, MenuItem, useMenu } from '.';

function Example({ onRename, enabled = true }: { onRename: () => void; enabled?: boolean }) {
  const menu = useMenu({ enabled });
  return (
    <>
      <MenuAnchor {...menu.anchorProps}>
        <button type="button" {...menu.buttonProps} aria-label="Options" onClick={menu.toggle} onKeyDown={menu.openOnKey('ArrowDown')} />
        <Menu {...menu.menuProps} label="Options menu" placement="below-end">
          <MenuItem
            onClick={() => {
              menu.close(true);
              onRename();
            }}
          >
            Rename
          </MenuItem>
          <MenuItem onClick={() => menu.close(true)}>Pin</MenuItem>
          <MenuItem danger onClick={() => menu.close(true)}>
            Delete
          </MenuItem>
        </Menu>
      </MenuAnchor>
      <p>outside</p>
    </>
  );
}

const button = () => screen.getByRole('button', { name: 'Options' });
const item = (name: string) => screen.getByRole('menuitem', { name });

describe('the shared menu', () => {
  it('is a menu button whose menu takes the focus and moves it with the keys', () => {
    render(<Example onRename={() => undefined} />);
    expect(button().getAttribute('aria-haspopup')).toBe('menu');
    expect(button().getAttribute('aria-expanded')).toBe('false');
    expect(button().getAttribute('aria-controls')).toBeNull();

    fireEvent.click(button());
    const menu = screen.getByRole('menu', { name: 'Options menu' });
    expect(button().getAttribute('aria-expanded')).toBe('true');
    expect(button().getAttribute('aria-controls')).toBe(menu.id);
    expect(menu.getAttribute('data-placement')).toBe('below-end');
    expect(document.activeElement).toBe(item('Rename'));
    expect(item('Delete').hasAttribute('data-danger')).toBe(true);
    expect(item('Rename').tabIndex).toBe(-1);

    fireEvent.keyDown(menu, { key: 'ArrowUp' });
    expect(document.activeElement).toBe(item('Delete'));
    fireEvent.keyDown(menu, { key: 'ArrowDown' });
    expect(document.activeElement).toBe(item('Rename'));
    fireEvent.keyDown(menu, { key: 'End' });
    expect(document.activeElement).toBe(item('Delete'));
    fireEvent.keyDown(menu, { key: 'Home' });
    expect(document.activeElement).toBe(item('Rename'));

    fireEvent.keyDown(menu, { key: 'Escape' });
    expect(screen.queryByRole('menu')).toBeNull();
    expect(document.activeElement).toBe(button());
  });

  it('opens with its arrow key, closes on Tab without taking the focus back, and on a press outside', () => {
    render(<Example onRename={() => undefined} />);
    fireEvent.keyDown(button(), { key: 'ArrowDown' });
    expect(document.activeElement).toBe(item('Rename'));
    fireEvent.keyDown(screen.getByRole('menu'), { key: 'Tab' });
    expect(screen.queryByRole('menu')).toBeNull();
    expect(document.activeElement).not.toBe(button());

    fireEvent.click(button());
    fireEvent.pointerDown(item('Pin'));
    expect(screen.getByRole('menu')).toBeTruthy();
    fireEvent.pointerDown(screen.getByText('outside'));
    expect(screen.queryByRole('menu')).toBeNull();
  });

  it('runs a choice and gives the focus back to its button', () => {
    const onRename = vi.fn();
    render(<Example onRename={onRename} />);
    fireEvent.click(button());
    fireEvent.click(item('Rename'));
    expect(onRename).toHaveBeenCalledTimes(1);
    expect(screen.queryByRole('menu')).toBeNull();
    expect(document.activeElement).toBe(button());
  });

  it('is no menu button while it has no menu', () => {
    render(<Example onRename={() => undefined} enabled={false} />);
    expect(button().getAttribute('aria-haspopup')).toBeNull();
    expect(button().getAttribute('aria-expanded')).toBeNull();
    fireEvent.click(button());
    fireEvent.keyDown(button(), { key: 'ArrowDown' });
    expect(screen.queryByRole('menu')).toBeNull();
  });
});
