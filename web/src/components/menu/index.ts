/**
 * A menu button and its popup menu (the WAI-ARIA menu button pattern), one for every menu
 * of the app: `useMenu()` holds whether it is open and does what a menu does; `MenuAnchor`
 * holds the button and the menu, `Menu` is the menu, `MenuItem` its items, all with the
 * look of `menu.module.css`.
 *
 * ```tsx
 * const menu = useMenu();
 * <MenuAnchor {...menu.anchorProps}>
 *   <Button {...menu.buttonProps} aria-label={…} onClick={menu.toggle} onKeyDown={menu.openOnKey('ArrowDown')} />
 *   <Menu {...menu.menuProps} label={…} placement="below-end">
 *     <MenuItem onClick={() => { menu.close(true); rename(); }}>…</MenuItem>
 *   </Menu>
 * </MenuAnchor>
 * ```
 */
export { Menu, MenuAnchor, MenuItem, MenuItemText, MenuTitle, type MenuItemProps, type MenuPlacement, type MenuProps } from './menu';
export { menuPanelClassName } from './menu-class-names';
export { onMenuKeyDown } from './menu-keys';
export { useMenu, type MenuOptions } from './use-menu';
